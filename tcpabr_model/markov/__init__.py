"""Markov renewal analysis of TCP over INSTCAP ABR and of TCP alone (seed 004, Sec. III)."""

from .scenario import FEEDBACKS, Scenario, switch_probability
from .skeleton import Skeleton, skeleton_for

__all__ = ["FEEDBACKS", "Scenario", "Skeleton", "skeleton_for", "switch_probability"]
