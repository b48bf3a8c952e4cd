"""Per-packet delay and buffer occupancy of the simulator (issue 26 item 1,
``tcpabr_model.sim.delay``): the histogram's resolution, exact delays on deterministic
scenarios, conservation (every delivered frame counted once), Little's law, both kernels
alike, a network's link delays, and the result / CLI / sweep outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import tcpabr_model.cli as cli
from tcpabr_model.sim import Network, Port, Scenario, TcpConfig, TcpParams, Vc, simulate, simulate_network
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.delay import QUANTILE_REL_ERROR, bin_values, histogram_quantile
from tcpabr_model.sim.driver import fast_path_args, run_network_replication
from tcpabr_model.sim.kernels.delay_record import (DL_EXACT, OC_PORT0, OC_SRCF, R_PORT0, R_PROP, R_QUEUE, R_SRC,
                                                   R_TOTAL, delay_bin)
from tcpabr_model.sim.kernels.fast_path import simulate_kernel
from tcpabr_model.sweep._methods import simulation_point


def _run_fast(sc, seed=0):
    """Fast path outputs and its (dhist, dsum, docc)."""
    args = fast_path_args(sc, np.random.default_rng(seed), trace=False)
    out = simulate_kernel(*args)
    assert out[2][L.O_ERR] == 0
    return out, args[-3:], args[0]


def _values(hist_row):
    """The single delay (slots) a histogram row holds, asserting it holds one."""
    nz = np.nonzero(hist_row)[0]
    assert nz.size == 1, f"more than one delay: bins {nz[:10]}"
    return int(nz[0])


# ---- histogram ------------------------------------------------------------------------

def test_bins_cover_each_delay_once():
    low, width = bin_values()
    vals = np.unique(np.concatenate([np.arange(0, 5000), 2 ** np.arange(8, 62), 2 ** np.arange(8, 62) - 1,
                                     np.random.default_rng(0).integers(0, 2 ** 61, 2000)]))
    for v in vals:
        b = delay_bin(int(v))
        assert low[b] <= v < low[b] + width[b]
        if v < DL_EXACT:
            assert b == v and width[b] == 1
        else:
            assert width[b] / low[b] <= 1 / 128
    # bins tile the line: each starts where the previous ends
    np.testing.assert_array_equal(low[1:], low[:-1] + width[:-1])


@settings(max_examples=40, deadline=None)
@given(hs.lists(hs.integers(0, 10 ** 7), min_size=1, max_size=300), hs.sampled_from([0.5, 0.95, 0.99]))
def test_quantile_within_stated_bound(xs, q):
    h = np.zeros(len(bin_values()[0]), dtype=np.int64)
    for x in xs:
        h[delay_bin(x)] += 1
    exact = float(np.sort(xs)[max(1, int(np.ceil(q * len(xs) - 1e-9))) - 1])    # inverse CDF
    got = histogram_quantile(h, q)
    if exact < DL_EXACT:
        assert got == exact
    else:
        assert abs(got - exact) <= QUANTILE_REL_ERROR * exact


def test_quantile_of_empty_histogram_is_nan():
    assert np.isnan(histogram_quantile(np.zeros(10, dtype=np.int64), 0.5))


# ---- exact, deterministic scenarios -----------------------------------------------------

def _standing_queue_scenario(wmax=30):
    """ABR source held at the high rate into a link that stays at half of it (no capacity
    change in 1e6 s): the window is larger than the pipe, so a standing bottleneck queue."""
    return Scenario(feedback="constant", initial_rate=1.0, rate_ratio=0.5, initial_state="low", tau=1e6, rtt=0.05,
                    buffer_packets=200, duration=20.0, warmup=5.0, tcp=TcpConfig(wmax=wmax))


def test_standing_queue_delays_are_exact():
    sc = _standing_queue_scenario()
    out, (dh, ds, docc), g = _run_fast(sc)
    net = sc.to_network()
    upf = net.units_per_frame
    delta = sc.to_slots(sc.rtt[0])
    frame = 2 * upf                 # a frame's service at half the cell rate, slots
    assert out[0][0, L.S_TIMEOUTS] == 0 and out[0][0, L.S_CDROP] == 0
    # window W, bottleneck always busy: a segment queued when the ACK W segments back
    # arrives is received W frame times later, minus the return path Delta
    total = sc.tcp.wmax * frame - delta
    assert _values(dh[R_TOTAL]) == delay_bin(total) and ds[R_TOTAL] == total * dh[R_TOTAL].sum()
    # the source sends at one cell per slot from an empty buffer: its last cell upf - 1 later
    assert _values(dh[R_SRC]) == upf - 1
    q = total - (upf - 1)
    assert ds[R_QUEUE] == q * dh[R_QUEUE].sum() and ds[R_PORT0] == q * dh[R_PORT0].sum()
    # Little's law, exact here (every frame in the window has the same delay and the window
    # holds whole cycles): frames at the bottleneck = frames served per slot x queue delay
    window = g[L.G_NSLOTS] - g[L.G_WARMUP]
    n = dh[R_PORT0].sum()           # served in the window's slots
    assert n == window // frame
    assert dh[R_TOTAL].sum() == n + 1   # received in it: one more, served in the slot before it
    assert docc[OC_PORT0] == n * q
    assert docc[OC_SRCF] == n * (upf - 1)


def test_standing_queue_in_simulation_result_seconds():
    sc = _standing_queue_scenario()
    r = simulate(sc, replications=1, seed=0)
    d = r.delay
    slot = sc.slot_seconds
    upf = sc.to_network().units_per_frame
    total = sc.tcp.wmax * 2 * upf - sc.to_slots(sc.rtt[0])
    assert d.total.mean.mean == pytest.approx(total * slot, rel=1e-12)     # means are exact
    for name in ("mean", "p50", "p95", "p99"):
        # 600 slots: a bin of 4 slots, reported at its midpoint (within the stated bound)
        assert getattr(d.total, name).mean == pytest.approx(total * slot, rel=QUANTILE_REL_ERROR)
        assert getattr(d.source, name).mean == pytest.approx((upf - 1) * slot, rel=1e-12)   # exact bins
        assert getattr(d.propagation, name).mean == 0.0
    assert d.total.frames == r.counters["delivered_segments_measured"]
    # Little: frames at the bottleneck = one frame per 2 upf slots x the queue delay
    assert d.queue_frames[0].mean == pytest.approx((total - (upf - 1)) / (2 * upf), rel=2e-3)


def test_no_queue_gives_the_service_slot_only():
    """Source at half the link rate, window below the pipe: no frame waits anywhere; the
    bottleneck serves each cell in the slot it arrives (queue delay 1 slot), the source
    sends a cell every 2 slots after a slot of credit (2 upf - 1 slots)."""
    sc = Scenario(feedback="constant", initial_rate=0.5, rate_ratio=1.0, tau=1e6, rtt=0.05, buffer_packets=20,
                  duration=10.0, warmup=2.0, tcp=TcpConfig(wmax=2))
    out, (dh, ds, docc), g = _run_fast(sc)
    upf = sc.to_network().units_per_frame
    assert _values(dh[R_QUEUE]) == 1
    assert _values(dh[R_SRC]) == 2 * upf - 1
    assert _values(dh[R_TOTAL]) == 2 * upf
    assert docc[OC_PORT0] == dh[R_PORT0].sum()     # one slot each (frames served in the window), Little


# ---- conservation, both kernels, Little's law --------------------------------------------

def test_every_delivered_frame_counted_once():
    sc = Scenario.from_normalized(delta=40, bmax=2, psi=1, feedback="effcap", duration_units=3000,
                                  warmup_units=0)
    out, (dh, ds, docc), g = _run_fast(sc, seed=4)
    st = out[0]
    assert g[L.G_WARMUP] == 0
    assert st[:, L.S_CDROP].sum() > 0           # losses: dropped frames are not counted
    n = st[:, L.S_FDELIV].sum()
    for r in (R_SRC, R_PROP, R_TOTAL, R_QUEUE, R_PORT0):
        assert dh[r].sum() == n


def test_both_kernels_count_the_same():
    sc = Scenario.from_normalized(delta=40, bmax=10, psi=1, feedback="instcap", duration_units=1500)
    net = sc.to_network()
    child = np.random.SeedSequence(5).spawn(1)[0]
    _, _, kg = run_network_replication(net, np.random.default_rng(child), kernel="general")
    _, _, ka = run_network_replication(net, np.random.default_rng(child), kernel="auto")
    for x, y in zip(kg["delay"], ka["delay"]):
        np.testing.assert_array_equal(x, y)
    assert kg["delay"][0][R_TOTAL].sum() > 0


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(feedback=hs.sampled_from(["instcap", "effcap", "none", "constant"]), psi=hs.sampled_from([0.5, 2.0, 20.0]),
       wmax=hs.integers(4, 40), seed=hs.integers(0, 10 ** 6))
def test_littles_law(feedback, psi, wmax, seed):
    """Mean occupancy = frames per slot x mean delay, at the source and at the bottleneck
    (buffer above the window: no loss, so every frame leaving the source is delivered);
    the gap is the frames in the system at the window's two ends."""
    sc = Scenario.from_normalized(delta=40, bmax=max(wmax, 2), psi=psi, feedback=feedback, wmax=wmax,
                                  duration_units=4000, warmup_units=200)
    out, (dh, ds, docc), g = _run_fast(sc, seed=seed)
    assert out[0][:, L.S_CDROP].sum() == 0
    n = dh[R_TOTAL].sum()
    assert n > 0
    w = g[L.G_NSLOTS] - g[L.G_WARMUP]
    edge = 2 * wmax * (ds[R_TOTAL] / n + 4 * sc.to_network().units_per_frame)    # end effects, slots x frames
    for occ, row in ((docc[OC_PORT0], R_QUEUE), (docc[OC_SRCF], R_SRC)):
        assert abs(occ - ds[row]) <= edge, (occ, ds[row], edge)
        assert abs(occ / w - n / w * ds[row] / n) <= 0.05 * max(occ / w, 1.0 / w) + edge / w


# ---- a network: link delays and every port ---------------------------------------------------

def _line(d=0.004):
    """Two ports in series with a d-second link, one VC, no loss, constant capacity."""
    ports = (Port(ubr_buffer=5000, link_delay=d), Port(rate=0.5, ubr_buffer=5000))
    return Network(ports=ports, vcs=(Vc(route=(0, 1), connections=2, ack_delay=0.01),),
                   tcp=TcpParams(wmax=20), duration=0.5, warmup=0.0)


def test_network_propagation_is_the_link_delay():
    net = _line()
    out, _, kin = run_network_replication(net, np.random.default_rng(0))
    dh, ds, docc = kin["delay"]
    d = net.to_slots(0.004)
    assert d > 0 and _values(dh[R_PROP]) == delay_bin(d)
    n = dh[R_TOTAL].sum()
    # no loss, no warm-up: every frame the last port served was delivered; some that the
    # first port served are still on the link
    assert out[0][:, L.S_CDROP].sum() == 0
    assert n > 0 and dh[R_PORT0 + 1].sum() == n and n <= dh[R_PORT0].sum() <= n + 2 * 20
    assert ds[R_TOTAL] == ds[R_SRC] + ds[R_QUEUE] + n * d
    # the second port (half rate) holds the queue: each cell takes 2 slots
    assert ds[R_PORT0 + 1] > ds[R_PORT0]
    assert docc[OC_PORT0 + 1] > 0


def test_simulate_network_reports_every_port():
    net = _line()
    r = simulate_network(net, replications=1)
    d = r.to_dict()["delay"]
    assert len(d["port_queue"]) == 2 and len(d["occupancy"]["queue_cells"]) == 2
    assert d["propagation"]["mean"]["mean"] == pytest.approx(net.to_slots(0.004) * net.slot_seconds)
    assert r.delay.total.frames > 0
    # a network's links have a delay: its line shows the figures, not the Scenario's note
    (prop,) = [x for x in r.delay.lines() if x.startswith("delay propagation")]
    assert "mean " in prop and "ACK return path" not in prop


# ---- outputs ----------------------------------------------------------------------------------

@pytest.fixture
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.sim.cli",))
    return cli.main


def test_cli_json_and_text(main, capsys):
    argv = ["simulate", "--feedback", "instcap", "--delta", "40", "--bmax", "10", "--psi", "1", "--seed", "1",
            "--duration", "20", "--replications", "2"]
    assert main(argv + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)["delay"]
    for k in ("source", "queue", "propagation", "total"):
        assert set(d[k]) == {"mean", "p50", "p95", "p99", "frames"} and d[k]["p95"]["n"] == 2
    assert d["unit"] == "s" and d["slot_seconds"] > 0
    assert d["total"]["p50"]["mean"] <= d["total"]["p95"]["mean"] <= d["total"]["p99"]["mean"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    for k in ("source", "queue", "propagation", "total"):
        assert sum(line.startswith(f"delay {k} ") for line in text.splitlines()) == 1
    # a Scenario's round trip is on the ACK path: its propagation line says so instead of zeros
    assert "delay propagation 0 ms: the round trip is on the ACK return path here" in text
    assert "occupancy" in text


def test_sweep_columns():
    row = simulation_point({"delta": 40, "bmax": 10, "psi": 1, "feedback": "instcap", "duration_units": 1000},
                           seed=3, replications=2)
    for k in ("source", "queue", "propagation", "total"):
        for s in ("mean", "p50", "p95", "p99"):
            assert np.isfinite(row[f"delay_{k}_{s}_s"]) and f"delay_{k}_{s}_s_hw" in row
    assert row["delay_total_mean_s"] == pytest.approx(row["delay_source_mean_s"] + row["delay_queue_mean_s"])
    assert row["occ_queue_cells"] >= row["occ_queue_frames"] >= 0
