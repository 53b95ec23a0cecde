"""AcousticBench inside lmms-eval: task YAMLs exported over its pack, and the hooks their utils.py calls (inspect_ai's
tasks are inspect_tasks.py beside this folder, where the seam's entry point looks for them)."""
