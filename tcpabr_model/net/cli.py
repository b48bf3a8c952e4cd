"""Deprecated alias of :mod:`tcpabr_model.sim.presets_cli`."""

from ..sim.presets_cli import *  # noqa: F401,F403
from ..sim.presets_cli import __all__  # noqa: F401
