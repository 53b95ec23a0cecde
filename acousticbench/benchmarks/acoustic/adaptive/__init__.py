"""Adaptive thresholds (--adaptive psi|staircase): trials placed by a procedure, generated on demand into the run
folder by the task's own generator, and the threshold with its interval in the task's unit (docs/adaptive.md)."""
