"""Tools over finished run folders: leaderboard, paired view, references, rescoring, report."""
