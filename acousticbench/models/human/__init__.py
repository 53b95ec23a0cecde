"""The Human model: a person answers the run's questions on a local listening page, through the same engine."""
