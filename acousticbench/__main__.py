"""`python -m acousticbench COMMAND ...`: the same as the `acousticbench` console command."""
import sys

from acousticbench.cli.subcommands import console

sys.exit(console())
