"""Small chains shared by the tests of the structured solve's large-block paths."""

from __future__ import annotations

from pathlib import Path

from tcpabr_model.capacity import read_trace
from tcpabr_model.markov import Scenario
from tcpabr_model.trace_study import fit_link

DATA = Path(__file__).parent / "data"


def small_instcap() -> Scenario:
    """INSTCAP with SACK over a 3-level chain with an outage and 4 patterns per level, fitted
    at 100 ms to ``tests/data/markov3_outage.down``: SCC blocks of a few to tens of states."""
    link = fit_link(read_trace(DATA / "markov3_outage.down"), 0.1, states=3, patterns=4)
    m = link.model
    return Scenario(delta=link.rtt * float(m.levels.max()), bmax=10, wmax=60, feedback="instcap", capacity=m,
                    service=link.service, tcp="sack")
