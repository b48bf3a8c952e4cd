"""A trace with a long stretch without delivery opportunities (issue 23 item 5).

Before: a Mahimahi trace whose timestamps jump by hours made ``tcpabr simulate`` print
``efficiency nan`` and exit 0 (a replication whose measured window fell inside the gap had
no capacity: 0 / 0).  Now [choice, docs/traces.md section 3] a measured window no longer than
the gap is refused, naming the trace and the gap; a longer one counts the gap as an outage
and gives a number.  A replication whose window has no capacity for another reason (a
K-state chain that stays in its outage level) raises ``ModelError``: never NaN.
"""

import math

import numpy as np
import pytest

import tcpabr_model.cli as cli
from tcpabr_model.capacity import Trace, from_arrays, write_trace
from tcpabr_model.errors import ModelError
from tcpabr_model.sim import Network, Port, Scenario, Vc, simulate
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.results import replication_metrics

HOURS = 3 * 3600 * 1000      # ms


def _gap_trace(gap_ms: int, name: str) -> Trace:
    """2 s at one opportunity per ms, ``gap_ms`` without any, 2 s again."""
    t = np.arange(1, 2001)
    return Trace(np.concatenate([t, t + 2000 + gap_ms]), name=name)


@pytest.fixture
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.sim.cli",))
    return cli.main


def test_longest_gap_of_the_hours_trace():
    tr = _gap_trace(HOURS, "hours")
    assert tr.longest_gap == (HOURS / 1000.0, 2.0)


@pytest.mark.parametrize("duration", [100.0, HOURS / 1000.0])
def test_scenario_refuses_a_window_no_longer_than_the_gap(duration):
    with pytest.raises(ValueError, match=r"duration=.* is invalid for the trace hours: it has no delivery "
                                         r"opportunity for 10800 s \(from 2.000 s to 10802.000 s of its "
                                         r"10804-s period\)"):
        Scenario(rtt=0.05, payload_bytes=1460, capacity=_gap_trace(HOURS, "hours"), duration=duration)


def test_network_port_refuses_it_too():
    port = Port(abr_buffer=320, capacity=_gap_trace(HOURS, "hours"))
    with pytest.raises(ValueError, match="duration=10.0 is invalid for the trace hours"):
        Network(ports=(port,), vcs=(Vc(category="abr", feedback="instcap"),), link_rate_bps=12e6, duration=10.0)


def test_cli_gap_of_hours_is_one_line_exit_2(main, capsys, tmp_path):
    path = tmp_path / "gap_hours.down"
    write_trace(_gap_trace(HOURS, "x"), path)
    code = main(["simulate", "--capacity-trace", str(path), "--rtt", "0.05", "--bmax", "10", "--duration", "100"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert (f"tcpabr simulate: error: --duration=100.0 is invalid for the trace {path}: it has no delivery "
            "opportunity for 10800 s (from 2.000 s to 10802.000 s") in err


@pytest.mark.parametrize("feedback", ["instcap", "none"])
def test_a_window_longer_than_the_gap_counts_it_as_an_outage(feedback):
    """60 s without opportunities in a 64-s period, 70-s windows: a number, and a lower one than
    the same link without the gap (TCP times out through the outage)."""
    kw = dict(feedback=feedback, rtt=0.05, buffer_packets=10, payload_bytes=1460, duration=70.0, warmup=1.0)
    gap = simulate(Scenario(capacity=_gap_trace(60_000, "gap60"), **kw), replications=2, seed=1)
    e = gap.efficiency_wire.mean
    assert math.isfinite(e) and 0.0 < e < 1.0
    assert gap.counters["timeouts"] > 0
    none = simulate(Scenario(capacity=_gap_trace(0, "nogap"), **kw), replications=1, seed=1)  # constant link
    assert e < none.efficiency_wire.mean


def test_a_chain_that_stays_in_its_outage_raises_instead_of_nan():
    """A K-state chain can hold its outage level through a whole window by chance: ModelError."""
    m = from_arrays([0.0, 1.0], [[0.99999, 0.00001], [0.5, 0.5]], epoch=40.0)
    sc = Scenario.from_normalized(delta=40, bmax=10, capacity=m, duration=5.0, warmup=0.0)
    with pytest.raises(ModelError, match=r"the measured window \(duration=5.0 s\) of a replication had no "
                                         "capacity at all"):
        simulate(sc, replications=2, seed=1)


def test_replication_metrics_refuse_an_empty_window():
    sc = Scenario()
    gout = np.zeros(L.O_NOUT)
    st = np.zeros((1, L.S_NSTATE), dtype=np.int64)
    g = np.zeros(L.G_NPAR, dtype=np.int64)
    g[L.G_NSLOTS] = 100
    with pytest.raises(ModelError, match="its efficiency is 0 / 0, undefined"):
        replication_metrics(sc, st, gout, g)
