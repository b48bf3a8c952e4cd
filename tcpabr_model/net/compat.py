"""Deprecated alias of :mod:`tcpabr_model.sim.compat`."""

from ..sim.compat import *  # noqa: F401,F403
from ..sim.compat import __all__  # noqa: F401
