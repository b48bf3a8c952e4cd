"""Deprecated: the network simulator now lives in :mod:`tcpabr_model.sim` (one cell-level
simulator, issue 14).  ``tcpabr_model.net`` and its public submodules (``model``, ``run``,
``presets``, ``presets_abr``, ``compat``, ``cli``) re-export the new names for one release."""

import warnings

from ..sim import (CapacityProcess, DropPolicy, NetResult, Network, Port, TcpParams, VbrSource, Vc,
                   from_sim_scenario, simulate_network)

warnings.warn("tcpabr_model.net is deprecated: import from tcpabr_model.sim", DeprecationWarning, stacklevel=2)

__all__ = ["Network", "Port", "Vc", "VbrSource", "TcpParams", "DropPolicy", "CapacityProcess",
           "simulate_network", "NetResult", "from_sim_scenario"]
