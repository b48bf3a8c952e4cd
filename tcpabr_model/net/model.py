"""Deprecated alias of :mod:`tcpabr_model.sim.network`."""

from ..sim.network import *  # noqa: F401,F403
from ..sim.network import __all__  # noqa: F401
