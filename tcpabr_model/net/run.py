"""Deprecated alias of :mod:`tcpabr_model.sim.network_run`."""

from ..sim.network_run import *  # noqa: F401,F403
from ..sim.network_run import __all__  # noqa: F401
