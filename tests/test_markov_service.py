"""Service inside the interval (issue 23, docs/model.md sec. 11): the pattern kernels against a
plain event-by-event replay, the scenario's checks, and the analysis on a shipped trace with an
outage (bounds ordered, at most 1, the prediction inside the band, rows stochastic)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpabr_model.capacity import ServicePatterns, epoch_labels, fit_patterns, fit_trace, read_trace
from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov.kernels.interval import EPS, pattern_abr_entry, pattern_tcp_alone_outcome
from tcpabr_model.markov.skeleton import skeleton_for
from tcpabr_model.trace_study import analyze_link, fit_link

DATA = Path(__file__).parent / "data"


def _replay(b, arrivals, opp, bmax, delta):
    """Reference: merge the events in time, opportunities first at equal times."""
    events = sorted([(t, 0) for t in opp] + [(t, 1) for t in arrivals])
    q, dep, admitted = b, 0, 0
    for t, kind in events:
        if kind == 0:
            if q > 0:
                q -= 1
                dep += 1
        else:
            if q >= bmax:
                return True, admitted, 0, 0
            q += 1
            admitted += 1
    return False, -1, q, dep


patterns = st.lists(st.integers(1, 40), max_size=25).map(lambda xs: sorted(x / 4.0 for x in xs))


@settings(max_examples=200, deadline=None)
@given(b=st.integers(0, 6), bmax=st.integers(1, 8), opp=patterns, s=st.sampled_from([0.5, 1.0, 1.5, 2.5, math.inf]))
def test_pattern_abr_entry_equals_an_event_replay(b, bmax, opp, s):
    b = min(b, bmax)
    delta = 10.0
    m_arr = 0 if math.isinf(s) else int(math.floor(delta / s + EPS))
    arrivals = [i * s for i in range(m_arr)]
    o = np.array(opp, dtype=float)
    il, k = pattern_abr_entry(b, o, 0, o.size, s, bmax, delta)
    lost, adm, _, dep = _replay(b, arrivals, opp, bmax, delta)
    if lost:
        assert il == adm
        # departures of the b queued packets and the admitted arrivals by Delta
        assert k == _replay(b, arrivals[:adm], opp, 10**9, delta)[3]
    else:
        assert il == -1 and k == dep
    # a prefix of n arrivals without loss leaves min(b + n, K) departures (the table's rule)
    for n in range(0, (il if il >= 0 else m_arr) + 1):
        assert _replay(b, arrivals[:n], opp, bmax, delta)[3] == min(b + n, k)


@settings(max_examples=200, deadline=None)
@given(b=st.integers(0, 6), bmax=st.integers(1, 8), d=st.integers(0, 8), ninc=st.integers(0, 8), opp=patterns,
       g=st.sampled_from([0.25, 1.0, 1.25, 3.0]), phase=st.sampled_from([0.0, 1.0]))
def test_pattern_tcp_alone_outcome_equals_an_event_replay(b, bmax, d, ninc, opp, g, phase):
    b = min(b, bmax)
    ninc = min(ninc, d)
    arrivals = []
    for i in range(d):
        t = (i + phase) * g
        arrivals += [t, t] if i >= d - ninc else [t]
    o = np.array(opp, dtype=float)
    got = pattern_tcp_alone_outcome(b, d, ninc, g, o, 0, o.size, bmax, phase)
    assert tuple(got) == _replay(b, arrivals, opp, bmax, 10.0)


def _outage_link(rtt=0.1):
    trace = read_trace(DATA / "markov3_outage.down")
    return trace, fit_link(trace, rtt, states=3, patterns=4)


def test_scenario_checks_the_service():
    trace, link = _outage_link()
    m = link.model
    cmax = float(m.levels.max())
    with pytest.raises(ValueError, match="service is invalid without capacity"):
        Scenario(delta=10.0, bmax=4, service=link.service)
    m2 = fit_trace(trace, epoch=0.2, states=3).model          # a chain at another epoch than the patterns
    with pytest.raises(ValueError, match="service.epoch"):
        Scenario(delta=0.2 * float(m2.levels.max()), bmax=4, capacity=m2, service=link.service)
    two = ServicePatterns(epoch=link.rtt, offsets=link.service.offsets[:2], weights=link.service.weights[:2])
    with pytest.raises(ValueError, match="levels"):
        Scenario(delta=link.rtt * cmax, bmax=4, capacity=m, service=two)
    with pytest.raises(ValueError, match="outage"):      # without service an outage level is still refused
        Scenario(delta=link.rtt * cmax, bmax=4, capacity=m)


def test_service_patterns_validate():
    with pytest.raises(ValueError, match="weights"):
        ServicePatterns(epoch=0.1, offsets=((np.array([0.05]),),), weights=(np.array([0.5]),))
    with pytest.raises(ValueError, match="offsets"):
        ServicePatterns(epoch=0.1, offsets=((np.array([0.2]),),), weights=(np.array([1.0]),))


def test_fit_patterns_keeps_the_levels_and_their_counts():
    trace = read_trace(DATA / "markov3_outage.down")
    fit = fit_trace(trace, epoch=0.1, states=3)
    lab = epoch_labels(trace, 0.1, fit.model.levels)
    sv = fit_patterns(trace, 0.1, lab, per_level=10_000)     # every epoch kept: exact level means
    assert np.allclose(sv.mean_rates, fit.model.levels, rtol=1e-9, atol=1e-9)
    assert sv.mean_counts[0] == 0.0                            # the outage level serves nothing


@pytest.mark.parametrize("feedback", ["none", "instcap"])
def test_analysis_with_outages_orders_its_bounds(feedback):
    trace, link = _outage_link()
    r = analyze_link(link, bmax=6, feedback=feedback)
    assert 0.0 < r.conservative <= r.prediction <= r.optimistic <= 1.0
    assert r.validity["outage_share"] > 0.0
    assert r.validity["lifted_or_clipped"].startswith("nothing lifted")
    # the outage is named alike for both (INSTCAP's former extra line blamed outages for what was the
    # feedback's timing, docs/model.md sec. 16)
    assert any("epochs serve nothing" in x for x in r.validity["strained"])
    assert not any("segmentation buffer" in x for x in r.validity["strained"])
    m = link.model
    sc = Scenario(delta=link.rtt * float(m.levels.max()), bmax=6, wmax=r.wmax, feedback=feedback, capacity=m,
                  service=link.service)
    sk = skeleton_for(sc)
    P = sk.transition_matrix(sc.rate_matrix)            # raises unless every row sums to 1 (1e-12)
    assert P.shape[0] == sk.n_states and sk.j_loss is not None
    res = analyze(sc, method="sparse-direct")
    assert res.residual <= 1e-11
    assert res.conservative <= res.prediction <= res.optimistic <= 1.0
    # the delays of a measured link, seconds: the chain's (time units of the peak level) / c_max
    sc_l = Scenario(delta=sc.delta, bmax=6, wmax=r.wmax, feedback=feedback, capacity=m, service=link.service,
                    loss_cycle=r.loss_cycle, ca_increment=r.ca_increment)
    res_l = analyze(sc_l)
    assert r.mean_queueing_delay_s == pytest.approx(res_l.mean_queueing_delay / float(m.levels.max()), rel=1e-12)
    assert r.mean_source_delay_s == pytest.approx(res_l.mean_source_delay / float(m.levels.max()), rel=1e-12)
    assert r.mean_queueing_delay_s > 0 and (r.mean_source_delay_s > 0) == (feedback == "instcap")


def test_no_bound_above_one_is_returned():
    # issue 23: with the cap room floored at 0 both bounds reached 1.005 here
    from tcpabr_model.capacity import from_arrays

    m = from_arrays([1.0, 0.1], transition=[[0.9, 0.1], [0.1, 0.9]], epoch=10.0)
    r = analyze(Scenario(delta=10.0, bmax=2, wmax=64, capacity=m))
    assert r.optimistic <= 1.0 and r.conservative <= 1.0 and r.prediction <= 1.0
    assert set(r.clipped) == {"optimistic", "conservative", "prediction"}
    for k, v in r.clipped.items():
        assert v is None or (v > 1.0 and getattr(r, k) == 1.0)


def test_cli_analyze_trace(capsys):
    from tcpabr_model.cli import main

    assert main(["analyze", "--trace", str(DATA / "markov3_outage.down"), "--rtt", "0.1", "--bmax", "6",
                 "--feedback", "none", "--states", "3", "--patterns", "4", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["conservative"] <= d["prediction"] <= d["optimistic"] <= 1.0
    assert d["model"]["states"] == 3 and d["model"]["patterns_per_level"] == [1, 4, 4] or d["model"]["states"] == 3
    assert "units" in d and "validity" in d


@pytest.mark.parametrize("argv, flag", [
    (["--bmax", "6"], "--rtt"),
    (["--bmax", "6", "--rtt", "0.1", "--feedback", "constant"], "--feedback"),
    (["--bmax", "6", "--rtt", "0.1", "--psi", "5"], "--psi"),
])
def test_cli_analyze_trace_refuses_in_one_line(capsys, argv, flag):
    from tcpabr_model.cli import main

    assert main(["analyze", "--trace", str(DATA / "markov3_outage.down"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and flag in err


def test_two_round_trips_without_an_ack_time_out():
    """sec. 11: a state with no returning ACK (d = 0) reached after an interval without one
    times out with certainty, loss window W = A + B (no growth), m = ceil(W / 2)."""
    _, link = _outage_link()
    m = link.model
    sc = Scenario(delta=link.rtt * float(m.levels.max()), bmax=6, wmax=40, feedback="instcap", capacity=m,
                  service=link.service)
    sk = skeleton_for(sc)
    st = sk.states
    timeouts = [i for i in range(sk.n_states) if st[i, 2] == 0 and sk.p_loss[i] == 1.0
                and sk.ls_ptr[i + 1] - sk.ls_ptr[i] == 1]
    assert timeouts, "a link with outages must reach the silence timeout"
    for i in timeouts[:50]:
        w = int(st[i, 0] + st[i, 1])
        assert sk.ls_m[sk.ls_ptr[i]] == (min(w, sc.wmax) + 1) // 2
        assert sk.post[i] == min(w, sc.wmax) and sk.j_loss[i] == 0.0


def test_minimum_cell_rate_of_the_instcap_source():
    """TM 4.0 MCR in the analysis: 0 is the paper's source (same numbers); with an outage level
    an MCR keeps the source sending (s = 1 / max(c_S, MCR)); refused without INSTCAP."""
    _, link = _outage_link()
    m = link.model
    base = dict(delta=link.rtt * float(m.levels.max()), bmax=6, wmax=40, capacity=m, service=link.service)
    r0 = analyze(Scenario(**base, feedback="instcap"))
    assert analyze(Scenario(**base, feedback="instcap", mcr=0.0)).prediction == r0.prediction
    r1 = analyze(Scenario(**base, feedback="instcap", mcr=0.2))
    assert r1.conservative <= r1.prediction <= r1.optimistic <= 1.0
    assert r1.prediction != r0.prediction
    with pytest.raises(ValueError, match="mcr=0.2 is invalid with feedback='none'"):
        Scenario(**base, feedback="none", mcr=0.2)
    with pytest.raises(ValueError, match="mcr"):
        Scenario(**base, feedback="instcap", mcr=-0.1)
    la = analyze_link(link, 6, "instcap", wmax=40, mcr=0.2 * float(m.levels.max()))
    assert la.loss_cycle == "timer"      # a measured link's default (trace_study.link_loss_cycle)
    assert la.ca_increment == "counter"  # and its growth (trace_study.LINK_CA_INCREMENT)
    rt = analyze(Scenario(**base, feedback="instcap", mcr=0.2, loss_cycle="timer", ca_increment="counter"))
    assert la.prediction == pytest.approx(min(1.0, rt.prediction * rt.mean_capacity * float(m.levels.max())
                                              / link.mean_rate), rel=1e-12)
    lp = analyze_link(link, 6, "instcap", wmax=40, mcr=0.2 * float(m.levels.max()), loss_cycle="paper",
                      ca_increment="binomial")
    assert lp.prediction == pytest.approx(min(1.0, r1.prediction * r1.mean_capacity * float(m.levels.max())
                                              / link.mean_rate), rel=1e-12)


def test_effcap_feedback_series_with_a_minimum_rate():
    from tcpabr_model.closed_forms import effcap_feedback_series

    x = np.array([4.0, 0.0, 0.0, 4.0, 4.0, 4.0])
    plain = effcap_feedback_series(x, 1, 2)
    floor = effcap_feedback_series(x, 1, 2, mcr=1.0)
    assert np.isnan(plain[0]) and np.isnan(floor[0])
    assert np.array_equal(floor[1:], np.maximum(plain[1:], 1.0)) and plain[2] == 0.0 and floor[2] == 1.0
    assert np.array_equal(effcap_feedback_series(x, 1, 2, mcr=0.0), plain, equal_nan=True)


@pytest.mark.parametrize("feedback", ["none", "instcap"])
def test_sack_over_service_patterns(feedback):
    """tcp='sack' over a measured link's patterns (docs/model.md secs. 11-12): stochastic, the
    solvers agree, the bounds ordered, fast recovery used, above the timeout-only TCP."""
    trace, link = _outage_link()
    r = analyze_link(link, bmax=6, feedback=feedback, tcp="sack")
    to = analyze_link(link, bmax=6, feedback=feedback)
    assert 0.0 < r.conservative <= r.prediction <= r.optimistic <= 1.0 and r.tcp == "sack"
    assert r.prediction > to.prediction
    m = link.model
    sc = Scenario(delta=link.rtt * float(m.levels.max()), bmax=6, wmax=r.wmax, feedback=feedback, capacity=m,
                  service=link.service, tcp="sack")
    sk = skeleton_for(sc)
    sk.transition_matrix(sc.rate_matrix)                 # raises unless every row sums to 1 (1e-12)
    assert sk.ls_m.max() > sk.mmax                       # some losses recovered by fast retransmit
    a = analyze(sc, method="sparse-direct")
    b = analyze(sc)
    assert a.residual <= 1e-11 and abs(a.prediction - b.prediction) < 1e-9


@settings(max_examples=200, deadline=None)
@given(abr=st.booleans(), b=st.integers(0, 8), bmax=st.integers(1, 8), d=st.integers(1, 20), ninc=st.integers(0, 4),
       opp=patterns, s=st.sampled_from([0.25, 0.5, 1.0]), a=st.integers(0, 10))
def test_pattern_loss_counts_equal_an_event_replay(abr, b, bmax, d, ninc, opp, s, a):
    """The whole loss interval over a pattern, counted on (J, J2, L), against the merged-event
    replay that every arrival is offered to."""
    from tcpabr_model.markov.kernels.recovery import pattern_loss_counts

    b = min(b, bmax)
    ninc = min(ninc, d)
    delta = 10.0
    if abr:
        n = min(a + d + ninc, int(np.floor(delta / s + 1e-9)))
        arrivals = [i * s for i in range(n)]
    else:
        g = s if d * s <= delta else delta / d
        arrivals = []
        for i in range(d):
            arrivals += [i * g] * (2 if i >= d - ninc else 1)
    events = sorted([(t, 0) for t in opp] + [(t, 1) for t in arrivals])
    q, admitted, lost, first = b, 0, 0, -1
    for t, kind in events:
        if kind == 0:
            q = max(q - 1, 0)
        elif q >= bmax:
            first = admitted if first < 0 else first
            lost += 1
        else:
            q += 1
            admitted += 1
    first = admitted if first < 0 else first
    opp_arr = np.array(opp, dtype=float)
    got = pattern_loss_counts(0 if abr else 1, a, b, d, ninc, s, s if d * s <= delta else delta / d, opp_arr, 0,
                              len(opp), bmax, delta, 0.0, 0, 0, np.empty(200))
    assert got == (first, admitted - first, lost)


def test_validity_names_a_buffer_that_outlives_the_rto():
    """markov3_outage at RTT 0.1 s: levels 0, 200 and 600 packets/s, i.e. 0, 20 and 60 packets per
    round trip.  ``slow_drain_share`` is the occupancy of the levels where a full buffer takes
    more than a round trip to drain (c rtt < bmax; the outage always): with 6 packets only the
    outage, with 40 the outage and the 200-packet/s level, which strains the fixed-RTO timeout
    cycle (docs/traces.md sec. 7.2i)."""
    from tcpabr_model.trace_study import SLOW_DRAIN_STRAIN, link_validity

    _, link = _outage_link()
    occ = np.asarray(link.model.stationary)
    lv = np.asarray(link.model.levels) * link.rtt
    small, deep = link_validity(link, 6), link_validity(link, 40)
    assert small["slow_drain_share"] == pytest.approx(occ[lv < 6].sum())
    assert deep["slow_drain_share"] == pytest.approx(occ[lv < 40].sum())
    assert small["slow_drain_share"] < deep["slow_drain_share"]
    assert deep["slow_drain_share"] > SLOW_DRAIN_STRAIN > small["slow_drain_share"]
    assert any("outlives the fixed RTO" in s for s in deep["strained"])
    assert not any("outlives the fixed RTO" in s for s in small["strained"])


@settings(max_examples=80, deadline=None)
@given(b=st.integers(0, 8), n=st.integers(0, 30), s=st.floats(0.5, 3.0),
       opp=st.lists(st.floats(0.0, 40.0), min_size=0, max_size=40))
def test_pattern_abr_queue_integral_is_the_area_under_the_replayed_queue(b, n, s, opp):
    """docs/model.md sec. 13 over ABR with service patterns: the exact integral against the queue of
    an event replay (opportunities first at equal times) sampled on a fine grid."""
    from tcpabr_model.markov.kernels.occupancy import pattern_abr_queue_integral

    delta = 40.0
    n = min(n, int(math.floor(delta / s + EPS)))
    opp = np.array(sorted(opp))
    # an opportunity within EPS of an arrival comes first, as in the kernels
    events = sorted([(float(t) - EPS, 0) for t in opp] + [(i * s, 1) for i in range(n)])
    grid = (np.arange(40_000) + 0.5) * (delta / 40_000)
    q, k, level = b, 0, np.empty(grid.size)
    for g_i, t in enumerate(grid):
        while k < len(events) and events[k][0] <= t:
            if events[k][1] == 0:
                q = max(q - 1, 0)
            else:
                q += 1
            k += 1
        level[g_i] = q
    want = level.sum() * (delta / 40_000)
    got = pattern_abr_queue_integral(b, n, s, opp, 0, opp.size, delta, EPS)
    assert got == pytest.approx(want, abs=0.02 * (b + n + 1))
