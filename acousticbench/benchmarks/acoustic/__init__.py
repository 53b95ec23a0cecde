"""AcousticBench: two-option (A/B) audio-perception questions of a pack, foldered by stage: stimuli/ (the signal
generators), pack/ (the pack's format, build, checks and dataset export), judge/ (a reply read into a label and a
record), metrics/ (accuracy, intervals, psychometric fits), views/ (its leaderboard rows, report and answer facts),
adaptive/ (thresholds from trials made on demand), shortcuts/ (the shortcut audit) and integrations/ (lmms-eval task
exports). At the top: the modules the seam loads by name (face.py, benchmark.py, inspect_tasks.py for inspect_ai),
its settings (spec.py), tasks, records and the ideal observer."""
