"""The second-order capacity chain (issue 23 item 1b, docs/traces.md sec. 7.2x):
fit_trace(..., order=2), capacity._order, fit_link(..., order=2), the CLIs' --order."""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpabr_model.capacity as cap
from tcpabr_model.cli import main
from tcpabr_model.trace_study import analyze_link, fit_link, link_validity

DATA = Path(__file__).parent / "data"


def _zigzag_trace(n=4000):
    """Levels 100, 300, 500 packets/s in 10-ms epochs in the periodic order 100 300 500 300 100
    300 ...: from 300 the next level is 500 after 100 and 100 after 500, always; a first-order
    chain says either with probability 1/2."""
    period = [100.0, 300.0, 500.0, 300.0]
    m = cap.CapacityModel(period, transition=np.roll(np.eye(4), 1, axis=1), epoch=0.01, time_unit=1.0,
                          packet_bytes=1500)
    return cap.synthetic_trace(m, n, 0)


def test_pair_labels_by_hand():
    lab = [0, 0, 1, 2, 1, 1]
    pairs, base = cap.pair_labels(lab, 3)
    # cyclic: epoch 0's previous is the last epoch's (1); codes prev*3+cur:
    # (1,0)=3 (0,0)=0 (0,1)=1 (1,2)=5 (2,1)=7 (1,1)=4 -> visited 0,1,3,4,5,7
    assert pairs.tolist() == [2, 0, 1, 4, 5, 3]
    assert base.tolist() == [0, 1, 0, 1, 2, 1]
    assert cap.previous_states(lab, 3).tolist() == [0, 0, 1, 1, 1, 2]
    with pytest.raises(ValueError, match="labels"):
        cap.pair_labels([0, 3], 3)
    with pytest.raises(ValueError, match="at least 2"):
        cap.pair_labels([0], 3)


def test_a_second_order_link_is_recovered_exactly():
    tr = _zigzag_trace()
    one = cap.fit_trace(tr, epoch=0.01, states=3)
    two = cap.fit_trace(tr, epoch=0.01, states=3, order=2)
    assert np.allclose(one.model.levels, [100, 300, 500])
    P1 = np.asarray(one.model.transition)
    assert P1[1, 0] == pytest.approx(0.5) and P1[1, 2] == pytest.approx(0.5)
    # four visited pairs: (1,0) (0,1) (2,1) (1,2); each has one successor
    assert two.order == 2 and two.states == 4 and two.model.n_levels == 4
    P2 = np.asarray(two.model.transition)
    assert set(np.unique(P2)) == {0.0, 1.0} and np.allclose(P2.sum(axis=1), 1.0)
    assert sorted(zip(two.previous_of_state, two.base_of_state)) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    assert np.allclose(np.sort(two.model.levels), [100, 300, 300, 500])
    # what the chain serves is the first-order chain's, and it remembers: lag-2 correlation of a
    # period-4 zigzag (100 300 500 300) is -1 in the trace and in the second-order chain
    acf = cap.chain_autocorrelation(two.model, [2])
    assert acf[0] == pytest.approx(-1.0, abs=1e-9)
    assert cap.chain_autocorrelation(one.model, [2])[0] > -0.9
    assert two.ec_error <= one.ec_error + 1e-12


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=200))
def test_pair_chain_invariants(labels):
    k = 4
    lab = np.asarray(labels)
    m1 = cap.CapacityModel([5.0, 10.0, 20.0, 40.0], transition=np.full((k, k), 1 / k), epoch=0.1, time_unit=1.0)
    chain, pairs, base = cap.second_order_chain(m1, lab)
    P = np.asarray(chain.transition)
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-12) and np.all(P >= 0)
    # a step goes from (i, j) to (j, k) only
    prev = cap.previous_states(lab, k)
    src, dst = np.nonzero(P)
    assert np.all(base[src] == prev[dst])
    # the pair frequencies are the stationary law (cyclic counts: a closed walk) ...
    freq = np.bincount(pairs, minlength=base.size) / lab.size
    assert np.allclose(freq @ P, freq, atol=1e-12)
    # ... and the level law is the labels' (what the first-order fit's occupancy is)
    occ = np.bincount(lab, minlength=k) / lab.size
    assert np.allclose(np.bincount(base, weights=freq, minlength=k), occ, atol=1e-12)
    # a level's mean sojourn is the first-order chain's 1 / (1 - P_ii) from the same counts
    soj = cap.level_sojourns(cap.CapacityModel(np.asarray(m1.levels)[base], transition=P, epoch=0.1,
                                               time_unit=1.0), base)
    nxt = np.roll(lab, -1)
    for i in np.unique(lab):
        n_i, n_ii = np.sum(lab == i), np.sum((lab == i) & (nxt == i))
        want = np.inf if n_ii == n_i else n_i / (n_i - n_ii)
        assert soj[i] == pytest.approx(want, rel=1e-9)


def test_fit_trace_order_checks():
    with pytest.raises(ValueError, match="order=3 is invalid"):
        cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, order=3)
    with pytest.raises(ValueError, match="boolean"):
        cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, order=True)
    with pytest.raises(ValueError, match="order=2 is invalid with regimes=2"):
        cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, order=2, regimes=2)
    a = cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1)
    assert a.order == 1 and a.base_of_state == () and a.previous_of_state == ()
    b = cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, order=2)
    d = b.to_dict()
    assert d["order"] == 2 and len(d["base_of_state"]) == b.states == b.model.n_levels
    # the occupancy and the mean are the first-order fit's
    assert np.allclose(np.bincount(b.base_of_state, weights=b.occupancy_model), a.occupancy_model, atol=1e-12)
    assert b.model.mean == pytest.approx(a.model.mean, rel=1e-12)


def test_fit_link_second_order_keeps_the_patterns_and_the_mean():
    tr = cap.read_trace(DATA / "markov3_outage.down")
    one = fit_link(tr, 0.1, patterns=3)
    two = fit_link(tr, 0.1, patterns=3, order=2)
    base = two.fit.base_of_state
    assert len(two.service.offsets) == two.model.n_levels
    for s, b in enumerate(base):
        assert two.service.weights[s] is one.service.weights[b] or np.array_equal(two.service.weights[s],
                                                                                  one.service.weights[b])
        assert all(np.array_equal(x, y) for x, y in zip(two.service.offsets[s], one.service.offsets[b]))
    assert two.describe()["order"] == 2 and one.describe()["order"] == 1
    assert one.describe()["regime_window_s"] is None    # one regime: no window (it read 0.0)
    v1, v2 = link_validity(one, 10), link_validity(two, 10)
    assert v2["mean_sojourn_rtts_weighted"] == pytest.approx(v1["mean_sojourn_rtts_weighted"], rel=1e-9)
    assert v2["outage_share"] == pytest.approx(v1["outage_share"], rel=1e-9)
    r = analyze_link(two, 10, "none")
    assert r.model["order"] == 2 and r.conservative <= r.prediction <= r.optimistic <= 1.0


def test_cli_order(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["trace", "fit", str(DATA / "markov3_outage.down"), "--order", "2", "--out", str(out),
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["order"] == 2 and d["states"] == len(d["base_of_state"])
    m = cap.load_model(out)
    assert m.n_levels == d["states"]
    assert main(["trace", "fit", str(DATA / "markov3_outage.down"), "--order", "2"]) == 0
    text = capsys.readouterr().out
    assert "second order" in text and "(previous, current)" in text and "in the JSON" in text
    for argv, msg in ((["trace", "fit", str(DATA / "markov3_outage.down"), "--order", "2", "--regimes", "2"],
                       "--order 2 is invalid with --regimes 2"),
                      (["analyze", "--order", "2"], "--order is used only with --trace")):
        assert main(argv) == 2
        assert msg in capsys.readouterr().err
    assert main(["analyze", "--trace", str(DATA / "markov3_outage.down"), "--rtt", "0.1", "--bmax", "10",
                 "--feedback", "none", "--order", "2", "--patterns", "2"]) == 0
    assert "second order" in capsys.readouterr().out
