"""The one run path: settings, sweeps of runs, run folders, their files and the plan."""
