"""AcousticBench: two-option (A/B) audio-perception questions of a pack: tasks, stimuli, pack build and verify,
the ideal observer, judging into records, metrics and psychometric fits, the shortcut audit."""
