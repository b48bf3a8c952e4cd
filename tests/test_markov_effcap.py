"""TCP over EFFCAP in the Markov engine: the chain of the last M + N - 1 levels (docs/model.md sec. 20).

Checks: the history chain against eq. 28's closed form and against its unlumped self (the law
of consecutive (service, source) pairs the engine sees, on random chains); the engine's
bounds with and without the lumping; M = N = 1 is INSTCAP bit for bit; one point against the
cell simulator; bad input names the parameter.
"""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpabr_model.capacity as capacity
from tcpabr_model.capacity import effcap_history_chain, from_arrays
from tcpabr_model.closed_forms import effcap_feedback_series
from tcpabr_model.markov import Scenario, analyze, simulate_embedded

DATA = Path(__file__).resolve().parent / "data"


def _stationary(Q):
    w, v = np.linalg.eig(Q.T)
    p = np.real(v[:, np.argmin(np.abs(w - 1))])
    return p / p.sum()


def _pair_law(hc):
    """Joint law of (service, source) at two consecutive epochs, in stationarity."""
    pi = _stationary(hc.matrix)
    out = {}
    for i in range(hc.n_states):
        for j in np.flatnonzero(hc.matrix[i] > 0):
            key = (hc.levels[i], round(hc.source_levels[i], 12), hc.levels[j], round(hc.source_levels[j], 12))
            out[key] = out.get(key, 0.0) + pi[i] * hc.matrix[i, j]
    return out


def test_source_levels_are_eq28_of_the_history():
    levels, P = [1.0, 0.5, 0.2], np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]])
    for m, n in [(1, 1), (1, 4), (2, 3), (3, 1)]:
        hc = effcap_history_chain(levels, P, m, n, lump=False)
        for h, s in zip(hc.representative, hc.source_levels):
            samples = np.asarray(levels)[h[::-1]]          # oldest first, as a switch measures them
            assert s == pytest.approx(effcap_feedback_series(samples, m, n)[-1], abs=1e-12)


def test_two_state_min_of_n_lumps_to_n_plus_one_states():
    P = np.array([[0.9, 0.1], [0.1, 0.9]])
    hc = effcap_history_chain([1.0, 0.5], P, 1, 8)
    assert hc.n_histories == 256 and hc.n_states == 9
    assert tuple(hc.representative[0]) == (0,) * 8 and hc.source_levels[0] == 1.0
    np.testing.assert_allclose(hc.matrix.sum(axis=1), 1.0, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 3), m=st.integers(1, 3), n=st.integers(1, 3), seed=st.integers(0, 10_000),
       zeros=st.booleans(), mcr=st.sampled_from([0.0, 0.3]))
def test_lumping_keeps_the_pairs_the_engine_sees(k, m, n, seed, zeros, mcr):
    rng = np.random.default_rng(seed)
    P = rng.random((k, k)) + 0.05
    if zeros:      # a cyclic skeleton keeps it irreducible
        P *= rng.random((k, k)) < 0.6
        P[np.arange(k), (np.arange(k) + 1) % k] += 0.1
    P /= P.sum(axis=1, keepdims=True)
    levels = np.sort(rng.random(k))[::-1] + 0.1
    lumped = effcap_history_chain(levels, P, m, n, mcr=mcr)
    full = effcap_history_chain(levels, P, m, n, mcr=mcr, lump=False)
    assert lumped.n_states <= full.n_states == lumped.n_histories
    np.testing.assert_allclose(lumped.matrix.sum(axis=1), 1.0, atol=1e-12)
    a, b = _pair_law(lumped), _pair_law(full)
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == pytest.approx(b[key], abs=1e-9)
    assert _stationary(lumped.matrix) @ lumped.levels == pytest.approx(_stationary(P) @ levels, abs=1e-9)


@pytest.mark.parametrize("psi", [2.0, 20.0])
def test_effcap_one_one_is_instcap_bit_for_bit(psi):
    a = analyze(Scenario(delta=40, bmax=10, psi=psi, feedback="instcap"))
    b = analyze(Scenario(delta=40, bmax=10, psi=psi, feedback="effcap", effcap_m=1, effcap_n=1))
    for f in ("conservative", "prediction", "optimistic", "optimistic_eq18", "mean_queueing_delay",
              "mean_source_delay"):
        assert getattr(a, f) == getattr(b, f), f
    assert a.n_states == b.n_states


def test_effcap_one_one_with_capacity_and_mcr_is_instcap():
    cm = from_arrays([1.0, 0.6, 0.25], transition=[[0.9, 0.1, 0.0], [0.05, 0.9, 0.05], [0.0, 0.2, 0.8]], epoch=20.0)
    a = analyze(Scenario(delta=20, bmax=6, wmax=48, capacity=cm, mcr=0.3))
    b = analyze(Scenario(delta=20, bmax=6, wmax=48, capacity=cm, mcr=0.3, feedback="effcap", effcap_m=1, effcap_n=1))
    assert b.prediction == pytest.approx(a.prediction, rel=1e-10)
    assert b.conservative == pytest.approx(a.conservative, rel=1e-10)


def test_lumped_and_unlumped_history_chains_give_the_same_bounds(monkeypatch):
    sc = Scenario(delta=20, bmax=5, psi=4, wmax=48, feedback="effcap", effcap_m=2, effcap_n=2)
    a = analyze(sc)
    real = capacity.effcap_history_chain
    monkeypatch.setattr(capacity, "effcap_history_chain", lambda *x, **kw: real(*x, **{**kw, "lump": False}))
    full = Scenario(delta=20, bmax=5, psi=4, wmax=48, feedback="effcap", effcap_m=2, effcap_n=2)
    assert full.n_levels > sc.n_levels
    b = analyze(full)
    for f in ("conservative", "prediction", "optimistic", "mean_queueing_delay", "mean_source_delay"):
        assert getattr(b, f) == pytest.approx(getattr(a, f), rel=1e-9), f


def test_long_minimum_holds_the_source_at_the_low_rate_at_small_psi():
    # psi 2, N = 8: the link is rarely high for 8 round trips, so the source sends at the low
    # rate, loses nothing, and carries the low level: efficiency 0.5 / 0.75 = 2/3 (a limit)
    a = analyze(Scenario(delta=40, bmax=10, psi=2, feedback="effcap", effcap_m=1, effcap_n=8))
    assert 0.66 < a.conservative <= a.prediction <= a.optimistic < 0.67
    inst = analyze(Scenario(delta=40, bmax=10, psi=2, feedback="instcap"))
    assert a.prediction > inst.prediction + 0.2


def test_embedded_monte_carlo_of_a_larger_history_chain():
    sc = Scenario(delta=20, bmax=5, psi=3, wmax=48, feedback="effcap", effcap_m=1, effcap_n=6)
    r = analyze(sc)
    mc = simulate_embedded(sc, n_cycles=200_000, seed=11)
    assert abs(mc.conservative - r.conservative) < 4 * mc.conservative_halfwidth


def test_against_the_cell_simulator_where_the_source_is_held_low():
    from tcpabr_model.sim import simulate
    from tcpabr_model.validity import embedded_sim_scenario

    a = analyze(Scenario(delta=40, bmax=10, psi=2, feedback="effcap", effcap_m=1, effcap_n=8))
    sc = embedded_sim_scenario(delta=40, bmax=10, psi=2, feedback="effcap", effcap_m=1, effcap_n=8,
                               duration_units=100_000)
    e = simulate(sc, replications=4, seed=7).efficiency_wire
    # tolerance: the CI plus 5 %, the validity map's test
    assert abs(a.prediction - e.mean) <= e.half_width + 0.05 * e.mean


@pytest.mark.parametrize("kwargs,name", [
    (dict(feedback="instcap", effcap_m=2), "effcap_m"),
    (dict(feedback="none", effcap_n=2), "effcap_n"),
    (dict(feedback="effcap", effcap_m=0), "effcap_m"),
    (dict(feedback="effcap", effcap_n=1.5), "effcap_n"),
    (dict(feedback="effcap", effcap_m=30, effcap_n=30),
     r"^effcap_m/effcap_n=30/30 is invalid with 2 levels: the 2\^59 histories"),
    (dict(feedback="effcap", switch_time="uniform"), "switch_time"),
])
def test_bad_effcap_input_names_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Scenario(delta=40, bmax=10, psi=20, **kwargs)


def test_history_chain_refuses_bad_input():
    with pytest.raises(ValueError, match="matrix"):
        effcap_history_chain([1.0, 0.5], [[0.5, 0.4], [0.5, 0.5]], 1, 2)
    with pytest.raises(ValueError, match="levels"):
        effcap_history_chain([1.0, -0.5], [[0.5, 0.5], [0.5, 0.5]], 1, 2)
    with pytest.raises(ValueError, match="m="):
        effcap_history_chain([1.0, 0.5], [[0.5, 0.5], [0.5, 0.5]], 12, 12)



@given(st.integers(1, 4), st.integers(1, 6), st.integers(-1, 40), st.integers(0, 2**31), st.booleans())
@settings(max_examples=60, deadline=None)
def test_row_labels_are_numpys_row_labels(cols, rows_exp, top, seed, wide):
    """The lumping's one-key labels are np.unique's over the rows (a CLI audit, Nov 29: 10.8 -> 2.9 s for
    EFFCAP M 4, N 16 on two levels), on the key path and on the rows' path (a radix that does not fit)."""
    from tcpabr_model.capacity._effcap_chain import _row_labels

    rng = np.random.default_rng(seed)
    sig = rng.integers(-1, max(top, -1) + 1, size=(2 ** rows_exp, cols))
    if wide:
        sig[0, 0] = 2 ** 40      # (2^40 + 2)^cols passes 2^62 for cols >= 2: the rows' path
    want = np.unique(sig, axis=0, return_inverse=True)[1].ravel()
    assert np.array_equal(_row_labels(sig), want)


def test_large_history_chain_is_refused_before_its_tables():
    """EFFCAP(4, 16) on two levels: 2,824 history levels, whose build tables over (level, source level)
    pairs need 6.3 GB; with max_states 20,000 it is refused before any state (it took 40 s and 9.6 GB)."""
    from tcpabr_model.errors import ChainTooLargeError

    sc = Scenario(delta=40, bmax=10, psi=20, feedback="effcap", effcap_m=4, effcap_n=16, max_states=20_000)
    assert sc.n_levels == 2824
    with pytest.raises(ChainTooLargeError, match=r"2824 capacity levels .* need 6.3 GB of tables over \(level, "
                                                  r"source level\) pairs before its first state, above the 0.5 GB"):
        analyze(sc)


def test_measured_patterns_and_outages_carry_over():
    from tcpabr_model.capacity import read_trace
    from tcpabr_model.trace_study import fit_link, link_scenario

    link = fit_link(read_trace(str(DATA / "markov3_outage.down")), 0.1, patterns=2)
    sc = link_scenario(link, 6, "instcap")
    a = analyze(sc)
    one = analyze(dataclasses.replace(sc, feedback="effcap", effcap_m=1, effcap_n=1))
    assert one.prediction == a.prediction and one.n_states == a.n_states
    e = analyze(dataclasses.replace(sc, feedback="effcap", effcap_m=1, effcap_n=4))
    assert e.scenario["history_states"] > sc.n_levels
    assert 0 < e.conservative <= e.prediction <= e.optimistic <= 1


def test_cli_analyzes_effcap_on_the_two_state_link_and_on_a_trace(capsys):
    from tcpabr_model.cli import main

    assert main(["analyze", "--feedback", "effcap", "--effcap-n", "3", "--psi", "5", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"effcap_n": 3' in out and '"history_states": 4' in out
    assert main(["analyze", "--feedback", "effcap", "--effcap-n", "2", "--trace", str(DATA / "markov3_outage.down"),
                 "--rtt", "0.1", "--bmax", "6", "--patterns", "2"]) == 0
    out = capsys.readouterr().out
    assert "over ABR (effcap)" in out and "EFFCAP: M=1 N=2 round trips" in out and "5 history states" in out


def test_analyze_link_takes_effcap_and_the_simulator_times_it_alike():
    from tcpabr_model.capacity import read_trace
    from tcpabr_model.trace_study import analyze_link, effcap_round_trip, fit_link

    link = fit_link(read_trace(str(DATA / "markov3_outage.down")), 0.1, patterns=2)
    inst = analyze_link(link, 6, "instcap")
    one = analyze_link(link, 6, "effcap", effcap_m=1, effcap_n=1)
    assert one.prediction == inst.prediction and one.model["history_states"] == link.model.n_levels
    e = analyze_link(link, 6, "effcap", effcap_m=2, effcap_n=2)
    assert e.model["effcap_m"] == 2 and 0 < e.conservative <= e.prediction <= e.optimistic <= 1
    assert effcap_round_trip(0.05, 2, 3) == {"interval": 0.05, "feedback_delay": 0.0, "m": 2, "n": 3}
    with pytest.raises(ValueError, match="effcap_m"):
        analyze_link(link, 6, "instcap", effcap_m=2)
