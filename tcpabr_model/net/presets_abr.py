"""Deprecated alias of :mod:`tcpabr_model.sim.presets_abr`."""

from ..sim.presets_abr import *  # noqa: F401,F403
from ..sim.presets_abr import __all__  # noqa: F401
