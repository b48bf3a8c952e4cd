"""Deprecated alias of :mod:`tcpabr_model.sim.presets`."""

from ..sim.presets import *  # noqa: F401,F403
from ..sim.presets import __all__  # noqa: F401
