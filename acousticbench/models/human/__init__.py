"""The Human model: a person answers the run's questions on a local listening page, through the same engine."""
from acousticbench.models.human.backend import Human

__all__ = ["Human"]
