"""One cell-level Monte Carlo simulator of TCP over ATM/ABR, UBR+/GFR and TCP alone.

Two kernels run over the same arrays (``sim/arrays/layout.py``) and the same TCP (``sim/tcp/connection.py``): the
general network kernel (ports, VCs, VBR, drop policies, ERICA; ``docs/network.md``) and
the single-bottleneck fast path of the core paper's system (``docs/simulator.md``).

Public names
------------
Scenario, TcpConfig
    The single-bottleneck system in physical units (``Scenario.from_normalized`` for the
    paper's normalised units); ``Scenario.to_network()`` builds the same system as a
    :class:`Network`.
simulate, SimulationResult, Trace
    Replications of a :class:`Scenario` on the fast path.
simulate_many
    :func:`simulate` of several scenarios with one seed, their replications in one pool.
Network, Port, Vc, VbrSource, TcpParams, DropPolicy, CapacityProcess
    A network (topology) description.
simulate_network, NetResult
    Replications of a :class:`Network` on the general kernel.
preset, preset_names
    The seeds' configurations (``presets.py``), each with its provenance.
Estimate, jain_index
    From :mod:`tcpabr_model.stats`.
capacity_path, m_from_delta, n_from_k, effcap_reference
    The two-state capacity process; EFFCAP helpers (Section VI) and eq. (28).
VARIANTS
    The TCP variants: timeout-only, reno, newreno, sack.
"""

import importlib

# names are imported on first use (PEP 562) so that ``tcpabr simulate --help`` and the other
# command modules stay light at import; ``from tcpabr_model.sim import X`` works as usual
_WHERE = {
    "Estimate": "..stats", "jain_index": "..stats", "capacity_path": ".capacity",
    "from_sim_scenario": ".scenario", "effcap_reference": ".feedback", "m_from_delta": ".feedback",
    "n_from_k": ".feedback", "CapacityProcess": ".network", "DropPolicy": ".network", "Network": ".network",
    "Port": ".network", "TcpParams": ".network", "VbrSource": ".network", "Vc": ".network",
    "NetResult": ".results", "simulate_network": ".driver", "simulate_many": ".driver",
    "preset": ".presets.catalogue", "preset_names": ".presets.catalogue", "SimulationResult": ".results", "Trace": ".results", "simulate": ".driver",
    "Scenario": ".scenario", "TcpConfig": ".scenario", "VARIANTS": ".tcp.variants",
}

__all__ = list(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
