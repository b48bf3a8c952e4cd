"""CapacityModel: the paper's chain, checks and refusals, conversions, files, closed forms."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpabr_model.capacity as cap
import tcpabr_model.closed_forms as cf
from tcpabr_model.errors import ErgodicityError, ModelError

TOL = 1e-12


# ---------------------------------------------------------------- strategies
@st.composite
def chains(draw, kmin=1, kmax=5):
    """Stochastic matrices with a positive diagonal and a positive cycle 0->1->..->0 (irreducible)."""
    k = draw(st.integers(kmin, kmax))
    w = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=k * k, max_size=k * k))).reshape(k, k)
    w += np.eye(k) * 0.05
    for i in range(k):
        w[i, (i + 1) % k] += 0.05
    P = w / w.sum(axis=1, keepdims=True)
    c = np.array(draw(st.lists(st.floats(0.0, 50.0), min_size=k, max_size=k)))
    c[draw(st.integers(0, k - 1))] += 1.0  # mean > 0
    epoch = draw(st.floats(0.01, 1.0))  # delta x spread of C stays < 745 (no underflow)
    return cap.from_arrays(c, P, epoch=epoch)


def _naive_eq24(P, c, delta, M):
    """E exp(-delta S_M) by enumerating every M-step path (small K, M)."""
    pi = cf.stationary_distribution(P)
    k = len(c)
    tot = 0.0
    for path in itertools.product(range(k), repeat=M):
        p = pi[path[0]]
        for a, b in zip(path, path[1:]):
            p *= P[a, b]
        tot += p * math.exp(-delta * sum(c[i] for i in path))
    return -math.log(tot) / (M * delta)


# ---------------------------------------------------------------- the paper's chain
@pytest.mark.parametrize("psi", [1.0, 2.0, 20.0, 1e4])
@pytest.mark.parametrize("rate_ratio", [0.5, 0.25, 1.0])
def test_two_state_is_the_engines_chain(psi, rate_ratio):
    """Same numbers as markov.Scenario (switch 1/psi per Delta, rates 1 and rate_ratio)."""
    from tcpabr_model.markov import Scenario

    sc = Scenario(delta=40.0, bmax=10, psi=psi, rate_ratio=rate_ratio)
    m = cap.two_state(rate_ratio, psi, sc.delta)
    p = sc.p_switch
    assert np.array_equal(m.transition, np.array([[1 - p, p], [p, 1 - p]]))
    assert np.array_equal(1.0 / m.levels, np.array(sc.service_times))
    assert m.epoch == sc.delta
    assert abs(m.mean - sc.mean_capacity) <= TOL
    assert np.allclose(m.stationary, [0.5, 0.5], rtol=0, atol=TOL)


@pytest.mark.parametrize("delta_qos", [1e-3, 0.05, 0.5, 3.0, math.inf])
def test_two_state_effective_capacity_equals_closed_form(delta_qos):
    """Per time unit = the two-state closed form with C_i = Delta x rate per slot (calibration.py's convention)."""
    psi, rr, D = 20.0, 0.5, 40.0
    m = cap.two_state(rr, psi, D)
    want = float(cf.effective_capacity_two_state(1 / psi, 1 / psi, D, D * rr, delta_qos)) / D
    assert cf.effective_capacity(m, delta_qos) == pytest.approx(want, rel=TOL, abs=TOL)
    assert cf.effective_capacity(m, delta=delta_qos) == cf.effective_capacity(m, delta_qos)


def test_two_state_continuous_is_the_simulators_chain():
    """Generator rate 1/tau with tau = psi * Delta (sim.capacity's continuous mode, mean sojourn tau)."""
    m = cap.two_state(0.5, 0.3, 40.0, time="continuous")
    tau = 0.3 * 40.0
    assert np.allclose(m.generator, [[-1 / tau, 1 / tau], [1 / tau, -1 / tau]], rtol=TOL)
    assert m.time == "continuous" and m.epoch is None
    with pytest.raises(ValueError, match="psi=0.3 is invalid"):
        cap.two_state(0.5, 0.3, 40.0)  # the embedded chain needs psi >= 1


def test_constant_model():
    m = cap.constant(3.0)
    assert m.n_levels == 1 and m.mean == 3.0
    for d in (0.0, 0.1, 10.0, math.inf):
        assert cf.effective_capacity(m, d) == pytest.approx(3.0, rel=TOL)


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize("kw, match", [
    (dict(levels=[1, 2], transition=[[0.5, 0.6], [0.5, 0.5]], epoch=1), r"transition\[0\] \(row sum 1.1\) is invalid"),
    (dict(levels=[1, 2], transition=[[1.5, -0.5], [0.5, 0.5]], epoch=1), r"transition\[0, 1\]=-0.5 is invalid"),
    (dict(levels=[1, 2], transition=[[1.0]], epoch=1), r"transition.shape=\(1, 1\) is invalid"),
    (dict(levels=[1, 2], transition=[[0.5, 0.5], [0.5, 0.5]]), r"epoch=None is invalid"),
    (dict(levels=[1, 2], transition=[[0.5, 0.5], [0.5, 0.5]], epoch=0), r"epoch=0 is invalid"),
    (dict(levels=[1, -2], transition=[[0.5, 0.5], [0.5, 0.5]], epoch=1), r"levels\[1\]=-2.0 is invalid"),
    (dict(levels=[1, np.nan], transition=[[0.5, 0.5], [0.5, 0.5]], epoch=1), r"levels\[1\]=nan is invalid"),
    (dict(levels=[0, 0], transition=[[0.5, 0.5], [0.5, 0.5]], epoch=1), r"stationary mean capacity is 0"),
    (dict(levels=[1, 2]), r"give exactly one"),
    (dict(levels=[1, 2], transition=[[1, 0], [0, 1]], generator=[[0, 0], [0, 0]], epoch=1), r"give exactly one"),
    (dict(levels=[1, 2], generator=[[-1, 2], [1, -1]]), r"generator\[0\] \(row sum 1.0\) is invalid"),
    (dict(levels=[1, 2], generator=[[1, -1], [1, -1]]), r"generator\[0, 1\]=-1.0 is invalid"),
    (dict(levels=[1, 2], generator=[[-1, 1], [1, -1]], epoch=1), r"epoch=1 is invalid: a continuous-time"),
    (dict(levels=[], transition=np.zeros((0, 0)), epoch=1), r"levels.shape=\(0,\) is invalid"),
])
def test_bad_models_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        cap.CapacityModel(**kw)


@pytest.mark.parametrize("kw", [
    dict(levels=[1, 2, 3], transition=[[1, 0, 0], [0, 0.5, 0.5], [0, 0.5, 0.5]], epoch=1),
    dict(levels=[1, 2], transition=[[1, 0], [0.5, 0.5]], epoch=1),  # 1 -> 0 but never back
    dict(levels=[1, 2], generator=[[0, 0], [1, -1]]),
])
def test_reducible_chains_are_refused_naming_the_classes(kw):
    with pytest.raises(ErgodicityError, match=r"is not irreducible: its states split into the classes \[\["):
        cap.CapacityModel(**kw)


def test_periodic_chain_accepted():
    """psi = 1: deterministic alternation, periodic but with a unique stationary distribution."""
    m = cap.two_state(0.5, 1.0, 10.0)
    assert np.allclose(m.stationary, [0.5, 0.5])


def test_outage_allowed_in_type_and_closed_forms_refused_by_consumers_that_cannot_carry_it():
    m = cap.from_arrays([0.0, 2.0], [[0.5, 0.5], [0.5, 0.5]], epoch=1.0)
    assert m.has_outage and m.mean == pytest.approx(1.0)
    assert cf.effective_capacity(m, math.inf) == 0.0
    assert 0.0 < cf.effective_capacity(m, 0.3) < 1.0
    with pytest.raises(ValueError, match=r"levels\[0\]=0.0 is invalid for the K-state engine: it cannot carry an outage"):
        m.require_no_outage("the K-state engine")
    cap.two_state(0.5, 2, 4).require_no_outage("anything")  # no outage: no error


def test_units_bits_per_second():
    m = cap.from_arrays([100.0, 400.0], [[0.9, 0.1], [0.1, 0.9]], epoch=0.1, time_unit=1.0, packet_bytes=1500)
    assert np.allclose(m.bits_per_second, [1.2e6, 4.8e6])
    with pytest.raises(ValueError, match="packet_bytes/time_unit is invalid"):
        _ = cap.two_state(0.5, 2, 4).bits_per_second


def test_model_is_immutable():
    m = cap.two_state(0.5, 2, 4)
    with pytest.raises(ValueError):
        m.transition[0, 0] = 0.3
    with pytest.raises(AttributeError):
        m.epoch = 3.0


# ---------------------------------------------------------------- invariants
@settings(deadline=None, max_examples=40)
@given(chains(), st.floats(1e-3, 5.0))
def test_stationary_and_effective_capacity_invariants(m, d):
    pi, P = m.stationary, m.transition
    assert abs(pi.sum() - 1.0) <= 1e-12 and pi.min() >= 0
    assert np.max(np.abs(pi @ P - pi)) <= 1e-12
    c = m.levels
    assert c.min() - 1e-12 <= m.mean <= c.max() + 1e-12
    lo, mean = cf.effective_capacity_limits(m)
    g = cf.effective_capacity(m, d)
    g2 = cf.effective_capacity(m, 2 * d)
    tol = 1e-9 * max(1.0, c.max())
    assert lo - tol <= g2 <= g + tol <= mean + 2 * tol


@settings(deadline=None, max_examples=25)
@given(chains(kmax=3), st.floats(1e-2, 2.0), st.integers(1, 4))
def test_eq24_exact_matches_path_enumeration(m, d, M):
    P, C, e = m.chain_per_epoch()
    want = _naive_eq24(P, C, d, M)
    got = cf.effective_capacity_eq24(P, C, d, M)
    assert got == pytest.approx(want, rel=1e-10, abs=1e-10)
    assert cf.effective_capacity_eq24(m, d, M) == pytest.approx(want / e, rel=1e-10, abs=1e-10)
    assert cf.effcap_estimate(m, M, d) == pytest.approx(want / e, rel=1e-10, abs=1e-10)


def test_eq24_limits_and_convergence_to_eq23():
    m = cap.from_arrays([0.0, 1.0, 3.0], [[0.5, 0.5, 0.0], [0.2, 0.6, 0.2], [0.0, 0.5, 0.5]], epoch=1.0)
    assert cf.effective_capacity_eq24(m, 0.0, 7) == pytest.approx(m.mean, rel=TOL)
    # inf: the best path stays in the outage state
    assert cf.effective_capacity_eq24(m, math.inf, 5) == 0.0
    g = cf.effective_capacity(m, 0.7)
    b20 = abs(cf.effective_capacity_eq24(m, 0.7, 20) - g)
    b400 = abs(cf.effective_capacity_eq24(m, 0.7, 400) - g)
    assert b400 < b20 * 20 / 400 * 2 + 1e-12  # bias O(1/M)


def test_estimator_and_design_rule_take_the_model():
    m = cap.two_state(0.5, 5, 0.03)  # epoch = s = 30 ms
    assert cf.effcap_design(0.2, m) == cf.effcap_design(0.2, 0.03)  # M = 7, N = 49
    assert cf.effcap_design(0.2, m).M == 7
    with pytest.raises(ValueError, match="N=5 is invalid with a CapacityModel"):
        cf.effcap_estimate(m, 3, 0.1, N=5)
    with pytest.raises(ValueError, match="time='continuous' is invalid"):
        cf.effcap_estimate(cap.two_state(0.5, 5, 1.0, time="continuous"), 3, 0.1)


def test_closed_forms_reject_mixed_call_forms():
    m = cap.two_state(0.5, 5, 1.0)
    with pytest.raises(ValueError, match="a CapacityModel carries its levels"):
        cf.effective_capacity(m, [1, 2], 0.1)
    with pytest.raises(ValueError, match="c=None is invalid"):
        cf.effective_capacity(np.eye(2), delta=0.1)


def test_delta_for_rate_with_model_inverts():
    m = cap.two_state(0.5, 10, 40.0)
    d = cf.delta_for_rate(m, 0.6)
    assert cf.effective_capacity(m, d) == pytest.approx(0.6, rel=1e-10)
    P, C, e = m.chain_per_epoch()
    assert d == pytest.approx(cf.delta_for_rate(P, C, 0.6 * e), rel=1e-9)


# ---------------------------------------------------------------- continuous time
def test_generator_round_trip_and_embedding_refusal():
    mc = cap.two_state(0.5, 3.0, 10.0, time="continuous")
    md = mc.discretize(10.0)
    back = md.to_generator()
    assert np.allclose(back.generator, mc.generator, rtol=1e-10, atol=1e-14)
    with pytest.raises(ModelError, match="embedding problem"):
        cap.two_state(0.5, 1.5, 10.0).to_generator()  # switch prob 2/3 > 1/2: no generator


def test_continuous_effective_capacity_is_the_small_epoch_limit():
    mc = cap.from_arrays([0.0, 1.0, 2.0], generator=[[-1.0, 1.0, 0.0], [0.5, -1.0, 0.5], [0.0, 2.0, -2.0]])
    d = 0.8
    g = cf.effective_capacity(mc, d)
    errs = [abs(cf.effective_capacity(mc.discretize(h), d) - g) for h in (0.01, 0.001)]
    assert errs[1] < errs[0] / 5 and errs[1] < 1e-2  # O(h)
    assert cf.effective_capacity(mc, math.inf) == 0.0 and cf.effective_capacity(mc, 0) == pytest.approx(mc.mean)
    r = cf.effective_capacity_solve(mc, d)
    assert r.lower <= r.value <= r.upper and r.upper - r.lower < 1e-8


# ---------------------------------------------------------------- files
@settings(deadline=None, max_examples=25)
@given(chains(), st.sampled_from(["json", "toml"]))
def test_save_load_round_trip_exact(tmp_path_factory, m, ext):
    path = tmp_path_factory.mktemp("m") / f"model.{ext}"
    m2 = cap.from_arrays(m.levels, m.transition, epoch=m.epoch, time_unit=0.005, packet_bytes=540)
    cap.save_model(m2, path)
    got = cap.load_model(path)
    assert got == m2
    assert np.array_equal(got.transition, m2.transition) and np.array_equal(got.levels, m2.levels)


@pytest.mark.parametrize("ext", ["json", "toml"])
def test_save_load_continuous(tmp_path, ext):
    m = cap.two_state(0.25, 0.5, 40.0, time="continuous")
    cap.save_model(m, tmp_path / f"m.{ext}")
    assert cap.load_model(tmp_path / f"m.{ext}") == m


@pytest.mark.parametrize("text, match", [
    ('{"format": "tcpabr-capacity-model", "version": 2, "time": "discrete"}', "version=2 is invalid"),
    ('{"format": "other", "version": 1}', "format='other' is invalid"),
    ('{"format": "tcpabr-capacity-model", "version": 1, "time": "discrete", "levels": [1], "transition": [[1]],'
     ' "epoch": 1, "colour": 3}', r"keys \['colour'\] are invalid"),
    ('{"format": "tcpabr-capacity-model", "version": 1, "time": "continuous", "levels": [1], "transition": [[1]],'
     ' "epoch": 1}', "time='continuous' is invalid"),
    ("not json", "is invalid: not a JSON file"),
])
def test_bad_model_files_are_refused(tmp_path, text, match):
    p = tmp_path / "m.json"
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        cap.load_model(p)



def test_reducible_model_file_names_the_file(tmp_path):
    """A file whose chain is reducible: ErgodicityError naming the file, as the other fields' errors do
    (a CLI audit, Nov 29: the message had no file)."""
    p = tmp_path / "m.json"
    p.write_text('{"format": "tcpabr-capacity-model", "version": 1, "time": "discrete", "levels": [1.0, 0.5], '
                 '"transition": [[1.0, 0.0], [0.0, 1.0]], "epoch": 0.1}')
    with pytest.raises(ErgodicityError, match=r"m\.json: transition is not irreducible: its states split"):
        cap.load_model(p)


def test_model_file_extension_checked(tmp_path):
    with pytest.raises(ValueError, match="must end in .json or .toml"):
        cap.save_model(cap.constant(1.0), tmp_path / "m.yaml")
    with pytest.raises(ValueError, match="missing.toml: cannot read the model file"):
        cap.load_model(tmp_path / "missing.toml")


@pytest.mark.parametrize("field, value, fragment", [
    ("epoch", -0.1, "epoch=-0.1 is invalid"),
    ("levels", ["a", "b"], "levels, transition or generator is invalid: must hold numbers"),
    ("levels", [1, -2], "levels[1]=-2.0 is invalid"),
])
def test_a_bad_field_of_a_model_file_names_the_file(tmp_path, field, value, fragment):
    import json

    from tcpabr_model.capacity import load_model
    d = {"format": "tcpabr-capacity-model", "version": 1, "levels": [1, 2], "time": "discrete",
         "transition": [[0.5, 0.5], [0.5, 0.5]], "epoch": 0.1, "time_unit": 1.0, "packet_bytes": 1500}
    d[field] = value
    p = tmp_path / "m.json"
    p.write_text(json.dumps(d))
    with pytest.raises(ValueError) as e:
        load_model(p)
    assert str(e.value).startswith(f"{p}: ") and fragment in str(e.value)
