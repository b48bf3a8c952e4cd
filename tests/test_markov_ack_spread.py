"""TCP alone's ACK clock spread over the round trip (``Scenario(ack_clock='spread')``,
docs/model.md sec. 3a, issue 25)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpabr_model.closed_forms import reno_efficiency
from _embedded_mc import assert_agrees_with_embedded_mc
from tcpabr_model.markov import Scenario, analyze, skeleton_for
from tcpabr_model.markov.kernels.interval import MODE_TCP_ALONE, fill_arrivals, interval_outcome


def test_spread_acks_are_evenly_spaced_over_the_interval():
    """d ACKs at i Delta / d, the last N releasing two packets (sec. 3a): exact times."""
    out = np.empty(16)
    n = fill_arrivals(MODE_TCP_ALONE, 0, 4, 1, 40.0 + 1.0, 40.0, out)   # s > Delta: the spread rule
    assert n == 5
    assert out[:n].tolist() == [0.0, 10.0, 20.0, 30.0, 30.0]


def test_a_rate_drop_meets_the_burst_only_with_the_clustered_clock():
    """Delta 40, B_max 10: 22 ACKs of a high-rate interval (spacing 1) into the low rate (service
    2) overflow the buffer (22 arrivals in 22 time units, 11 served); spread over the round trip
    (spacing 40/22) the queue never passes 2, as the simulator's queue after such drops shows
    (docs/model.md sec. 3a)."""
    work = np.empty(64)
    lost, j, *_ = interval_outcome(MODE_TCP_ALONE, 0, 0, 22, 0, 2.0, 1.0, 10, 40.0, work)
    assert lost and j == 19          # 2 (B_max - b) - 1 admitted before the first loss (sec. 3)
    lost, j, a1, b1, d1 = interval_outcome(MODE_TCP_ALONE, 0, 0, 22, 0, 2.0, 41.0, 10, 40.0, work)
    assert not lost and b1 + d1 == 22 and b1 == 2 and d1 == 20


def _by_s(sk):
    """p_loss of each state keyed by (A, B, D, R), one value per S."""
    out: dict = {}
    for x, p in zip(map(tuple, sk.states[:, :4]), sk.p_loss):
        out.setdefault(x, []).append(p)
    return out


@settings(max_examples=8, deadline=None)
@given(bmax=st.integers(3, 8), tcp=st.sampled_from(["timeout-only", "sack"]),
       switch=st.sampled_from(["epoch", "uniform"]))
def test_with_spread_the_level_that_served_the_acks_no_longer_matters(bmax, tcp, switch):
    """The ACK clock carries no spacing: states that differ only in S lose with the same probability,
    with and without the patterns of switch_time='uniform' (no ACK pattern, sec. 3a); with the
    default clock they differ."""
    kw = dict(delta=12, bmax=bmax, wmax=32, psi=3.0, feedback="none", tcp=tcp, switch_time=switch)
    spread = _by_s(skeleton_for(Scenario(ack_clock="spread", **kw)))
    assert all(max(v) - min(v) < 1e-15 for v in spread.values())
    clustered = _by_s(skeleton_for(Scenario(**kw)))
    assert any(max(v) - min(v) > 1e-3 for v in clustered.values())


@pytest.mark.parametrize("tcp,psi", [("sack", 2.0), ("sack", 20.0), ("timeout-only", 3.0)])
def test_spread_chain_agrees_with_embedded_monte_carlo(tcp, psi):
    """The Monte Carlo samples the process with its own interval replay (s = Delta + 1, so every
    d ACKs come at Delta / d) and never reads the matrix."""
    assert_agrees_with_embedded_mc(Scenario(delta=40, bmax=10, psi=psi, feedback="none", tcp=tcp,
                                            ack_clock="spread"), n_cycles=200_000, seed=11)


@pytest.mark.parametrize("delta", [40, 80])
@pytest.mark.parametrize("beta", [0.25, 0.5, 0.75, 1.0])
def test_spread_matches_lakshman_madhow_at_constant_capacity(delta, beta):
    """sack TCP alone at constant capacity: the spread clock's prediction within 0.5 % of
    Lakshman-Madhow (measured 0.0-0.25 %; the clustered clock's is within 1.5 %)."""
    bmax = int(round(beta * delta))
    r = analyze(Scenario(delta=delta, bmax=bmax, psi=20, rate_ratio=1.0, feedback="none", tcp="sack",
                         wmax=4 * delta, ack_clock="spread"))
    lm = reno_efficiency(pipe=delta, buffer=bmax, wmax=4 * delta)
    assert abs(r.prediction - lm) <= 0.005 * lm
    assert r.conservative - 1e-9 <= lm <= r.optimistic + 0.005


@pytest.mark.parametrize("switch", ["epoch", "uniform"])
def test_the_count_is_the_chain_solved(switch):
    """estimate_chain runs the same kernel with the spread flag: its count is the chain's."""
    from tcpabr_model.markov import estimate_chain

    sc = Scenario(psi=3, bmax=8, delta=20, wmax=48, feedback="none", tcp="sack", ack_clock="spread",
                  switch_time=switch)
    assert estimate_chain(sc).n_states == analyze(sc).n_states


@pytest.mark.parametrize("clock", ["at-epoch", "spread"])
def test_a_window_below_the_pipe_without_loss_delivers_w_per_delta(clock):
    """B_max 40 holds every window (no loss): the flow delivers W_max per round trip of Delta, 18 / 40
    packets per time unit at both levels (the simulator's round trip adds the transmission: 0.5769,
    docs/model.md sec. 3a)."""
    r = analyze(Scenario(psi=1.5, bmax=40, wmax=18, feedback="none", tcp="sack", ack_clock=clock))
    assert r.loss_probability == 0.0
    assert r.prediction == pytest.approx(18 / 40 / 0.75, rel=1e-12)
    assert r.conservative == pytest.approx(r.optimistic, rel=1e-12)


def test_spread_bounds_are_ordered_and_below_capacity():
    for psi in (1.0, 1.5, 5.0, 100.0):
        r = analyze(Scenario(psi=psi, bmax=10, feedback="none", tcp="sack", ack_clock="spread"))
        assert 0.0 < r.conservative <= r.prediction <= r.optimistic <= 1.0
        assert r.scenario["ack_clock"] == "spread"


def test_spread_is_refused_over_abr():
    with pytest.raises(ValueError, match="ack_clock"):
        Scenario(feedback="instcap", ack_clock="spread")


def test_cli_takes_the_spread_clock(capsys):
    from tcpabr_model.cli import main

    assert main(["analyze", "--feedback", "none", "--variant", "sack", "--psi", "20", "--bmax", "10",
                 "--ack-clock", "spread", "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["ack_clock"] == "spread"
    ref = analyze(Scenario(psi=20, bmax=10, feedback="none", tcp="sack", ack_clock="spread"))
    assert out["prediction"] == pytest.approx(ref.prediction, rel=1e-12)
    with pytest.raises(SystemExit) as exc:
        main(["analyze", "--feedback", "none", "--ack-clock", "even"])
    assert exc.value.code == 2


def test_validity_point_applies_the_clock_to_tcp_alone_only():
    from tcpabr_model.validity import validity_grid

    with pytest.raises(ValueError, match="ack_clock"):
        validity_grid({"ack_clock": ["even"]})


def test_ack_clock_script_measures_both_sides(tmp_path, capsys):
    """``analytics/ack_clock.py``: the simulator's loss rate and window at a loss beside the chain's
    with each clock (docs/model.md sec. 3a's table), on a short run."""
    import pandas as pd
    from _scripts import load_script

    mod = load_script("analytics/ack_clock.py", "ack_clock_script")
    assert mod.main(["--units", "40000", "--out", str(tmp_path)]) == 0
    df = pd.read_csv(tmp_path / "ack_clock.csv").set_index("source")
    assert len(df) == 4 and np.isfinite(df.loc["simulator", ["loss_events_per_kunit", "mean_window"]]).all()
    clustered, spread = df.loc["chain, at-epoch, switch_time epoch"], df.loc["chain, spread, switch_time epoch"]
    # the spread clock loses later and less often than the clustered one (sec. 3a)
    assert spread["window_at_loss"] > clustered["window_at_loss"] + 5
    assert spread["loss_events_per_kunit"] < clustered["loss_events_per_kunit"]
    assert "| simulator |" in capsys.readouterr().out
    assert mod.main(["--psi", "0.5"]) == 2


# --- the chain's round trip with the transmission (round_trip='transmission', docs/model.md sec. 3b) ---

def test_transmission_round_trip_delivers_w_per_delta_plus_one():
    """Without loss a window below the pipe delivers W_max per round trip of Delta + 1: 18 / 41."""
    r = analyze(Scenario(psi=1.5, bmax=40, wmax=18, feedback="none", tcp="sack", ack_clock="spread",
                         round_trip="transmission"))
    assert r.loss_probability == 0.0
    assert r.prediction == pytest.approx(18 / 41 / 0.75, rel=1e-12)
    assert r.scenario["round_trip"] == "transmission" and r.scenario["epoch"] == 41.0


@pytest.mark.parametrize("fb,kw", [("none", {"ack_clock": "spread"}), ("instcap", {"switch_time": "uniform"})])
def test_transmission_round_trip_is_the_chain_of_delta_plus_one(fb, kw):
    """The option is the chain whose epoch is Delta + 1, with the same mean sojourn psi Delta."""
    a = analyze(Scenario(delta=40, psi=5.0, bmax=10, feedback=fb, tcp="sack", round_trip="transmission", **kw))
    b = analyze(Scenario(delta=41, psi=5.0 * 40 / 41, bmax=10, feedback=fb, tcp="sack", **kw))
    for k in ("prediction", "conservative", "optimistic", "mean_queue"):
        assert getattr(a, k) == pytest.approx(getattr(b, k), rel=1e-11)
    assert a.n_states == b.n_states


def test_transmission_round_trip_switch_probability():
    sc = Scenario(delta=40, psi=20.0, round_trip="transmission")
    assert sc.p_switch == pytest.approx(41 / 800) and sc.epoch == 41.0
    assert Scenario(delta=40, psi=1.0, round_trip="transmission").p_switch == 1.0   # capped: a change every epoch
    assert Scenario(delta=40, psi=20.0).epoch == 40.0


def test_transmission_round_trip_agrees_with_embedded_monte_carlo():
    assert_agrees_with_embedded_mc(Scenario(delta=40, bmax=10, psi=3.0, feedback="none", tcp="sack",
                                            ack_clock="spread", round_trip="transmission"),
                                   n_cycles=200_000, seed=13)


@pytest.mark.parametrize("kwargs,word", [
    (dict(round_trip="physical"), "round_trip"),
    (dict(round_trip="transmission", loss_cycle="timer", feedback="none"), "loss_cycle"),
])
def test_transmission_round_trip_refusals(kwargs, word):
    with pytest.raises(ValueError, match=word):
        Scenario(**kwargs)


def test_transmission_round_trip_refused_with_a_capacity_model():
    from tcpabr_model.capacity import from_arrays

    cm = from_arrays([1.0, 0.5], np.array([[0.9, 0.1], [0.1, 0.9]]), epoch=40.0)
    with pytest.raises(ValueError, match="round_trip"):
        Scenario(capacity=cm, round_trip="transmission")
