"""AcousticBench inside other harnesses: inspect_ai tasks and lmms-eval task exports over its pack."""
