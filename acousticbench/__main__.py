"""`python -m acousticbench COMMAND ...`: the same as the `acousticbench` console command."""
import sys

from acousticbench.cli import console

sys.exit(console())
