"""The Markov renewal engine with K capacity levels (issue 15 item 2; docs/model.md,
"K capacity states").

* K = 2 through :func:`tcpabr_model.capacity.two_state` is today's two-state engine
  (psi, rate_ratio) to 1e-12 (hypothesis, over small scenarios and the three feedbacks).
* Independent checks for K = 3: a lumpable 3-level chain equals the 2-level chain it
  lumps to; all levels equal equals the constant link; the matrix-free solve equals the
  assembled matrix solved by sparse LU; the embedded Monte Carlo agrees within its CI.
* Units: levels normalised to the peak, epochs in other units, sub-epochs, generators.
* Refusals: outages, epochs that do not divide Delta, psi/rate_ratio with capacity.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcpabr_model.capacity import CapacityModel, from_arrays, save_model, two_state
from tcpabr_model.cli import main
from tcpabr_model.errors import ModelError
from tcpabr_model.markov import Scenario, analyze, estimate_chain, simulate_embedded, skeleton_for
from tcpabr_model.markov.solvers import stationary_distribution, structured_matrix_free
from tcpabr_model.sweep._methods import analysis_point

SETTINGS = settings(max_examples=int(os.environ.get("HYP_EXAMPLES", 30)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
KEYS = ("optimistic", "conservative", "optimistic_eq18", "loss_probability", "mean_cycle_length",
        "throughput_optimistic", "throughput_conservative", "mean_capacity")

#: a 3-level chain (mean sojourn 10 round trips at the top level)
Q3 = [[0.9, 0.06, 0.04], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]]


def _close(a, b, tol):
    for k in KEYS:
        x, y = getattr(a, k), getattr(b, k)
        assert abs(x - y) <= tol * max(1.0, abs(x)), (k, x, y)


@st.composite
def small_two_state(draw):
    delta = float(draw(st.integers(2, 12)))
    rr = draw(st.sampled_from([0.25, 0.4, 0.5, 0.75, 1.0]).filter(lambda r: np.floor(delta * r + 1e-9) >= 1))
    fb = draw(st.sampled_from(["instcap", "none", "constant"]))
    kw = {"source_rate": draw(st.floats(rr, 1.0))} if fb == "constant" else {}
    return dict(delta=delta, bmax=draw(st.integers(1, 4)), wmax=draw(st.integers(2, 16)), feedback=fb,
                **kw), draw(st.floats(1.5, 60.0)), rr


@given(case=small_two_state())
@SETTINGS
def test_two_state_model_equals_todays_engine(case):
    """K = 2 via CapacityModel is the same model as psi/rate_ratio: equal to 1e-12."""
    kw, psi, rr = case
    old = Scenario(psi=psi, rate_ratio=rr, **kw)
    new = Scenario(capacity=two_state(rr, psi, kw["delta"]), **kw)
    assert new.levels == old.levels and np.array_equal(new.rate_matrix, old.rate_matrix)
    a, b = analyze(old), analyze(new)
    _close(a, b, 1e-12)
    assert (a.n_states, a.nnz) == (b.n_states, b.nnz)
    assert estimate_chain(new).n_states == b.n_states  # the count stays exact for K = 2


def test_lumpable_three_levels_equal_two_state():
    """Levels (1, r, r) with a chain lumpable to the symmetric 2-state one (p = 1/psi out of
    the high level, split over the two low ones; p back from each low one): the embedded
    chain depends on the rate only through its level, so the bounds are the 2-state ones."""
    p, q = 0.1, 0.3
    lump = from_arrays([1.0, 0.5, 0.5], [[1 - p, p / 3, 2 * p / 3], [p, 1 - p - q, q], [p, q, 1 - p - q]],
                       epoch=10.0)
    for fb, kw in (("instcap", {}), ("none", {}), ("constant", {"source_rate": 0.8})):
        ref = analyze(Scenario(delta=10, bmax=3, wmax=16, psi=1 / p, rate_ratio=0.5, feedback=fb, **kw))
        k3 = analyze(Scenario(delta=10, bmax=3, wmax=16, capacity=lump, feedback=fb, **kw))
        assert k3.method.endswith("(matrix-free)")
        _close(ref, k3, 1e-10)


@pytest.mark.parametrize("fb", ["instcap", "none"])
def test_all_levels_equal_is_the_constant_link(fb):
    """Three equal levels: the constant link (rate_ratio = 1).  Over ABR no loss is possible
    (a loss-free closed class: the structured solve falls back to sparse-direct)."""
    m = from_arrays([2.0, 2.0, 2.0], Q3, epoch=12 / 2.0)  # 12 packet times at the peak
    ref = analyze(Scenario(delta=12, bmax=3, wmax=24, psi=7.0, rate_ratio=1.0, feedback=fb))
    k3 = analyze(Scenario(delta=12, bmax=3, wmax=24, capacity=m, feedback=fb))
    _close(ref, k3, 1e-10)
    assert k3.mean_capacity == pytest.approx(1.0, abs=1e-15)
    if fb == "instcap":
        assert k3.loss_probability == 0.0 and k3.optimistic == pytest.approx(1.0, abs=1e-12)


#: birth-death: no jump between the extreme levels (zeros in the matrix: some enumerated
#: states are never visited and must get mass 0)
Q3_BD = [[0.9, 0.1, 0.0], [0.1, 0.8, 0.1], [0.0, 0.2, 0.8]]


@pytest.mark.parametrize("Q", [Q3, Q3_BD], ids=["dense", "birth-death"])
@pytest.mark.parametrize("fb,kw", [("instcap", {}), ("none", {}), ("constant", {"source_rate": 0.7})])
def test_matrix_free_equals_assembled_matrix(fb, kw, Q):
    """K = 3: the factored solve (no P) equals sparse LU on the assembled P; pi sums to 1."""
    sc = Scenario(delta=16, bmax=4, wmax=24, capacity=from_arrays([1.0, 0.6, 0.35], Q, epoch=16.0),
                  feedback=fb, **kw)
    a = analyze(sc)
    b = analyze(sc, method="sparse-direct")
    assert a.method == "structured (matrix-free)" and b.method == "sparse-direct"
    _close(a, b, 1e-10)
    assert a.conservative <= a.optimistic <= a.optimistic_eq18 + 1e-12
    assert a.nnz >= b.nnz and a.residual <= 1e-11
    sk = skeleton_for(sc)
    sol, _ = structured_matrix_free(sk, sc.rate_matrix)
    assert sol.pi.min() >= 0 and abs(sol.pi.sum() - 1) < 1e-12
    ref = stationary_distribution(sk, sc.rate_matrix, method="sparse-direct")
    assert np.abs(sol.pi - ref.pi).sum() < 1e-10
    assert estimate_chain(sc).n_states == sk.n_states  # exact count of the built chain


@pytest.mark.parametrize("fb", ["instcap", "none"])
def test_three_levels_agree_with_embedded_monte_carlo(fb):
    """The Monte Carlo samples the process (rate chain stepped by its matrix) without the
    transition matrix: eq. 18 and the conservative bound within 4 half-widths."""
    sc = Scenario(delta=10, bmax=3, wmax=16, capacity=from_arrays([1.0, 0.6, 0.3], Q3, epoch=10.0),
                  feedback=fb)
    r = analyze(sc)
    mc = simulate_embedded(sc, n_cycles=100_000, seed=3)
    assert abs(mc.optimistic_eq18 - r.optimistic_eq18) < 4 * mc.optimistic_eq18_halfwidth
    assert abs(mc.conservative - r.conservative) < 4 * mc.conservative_halfwidth


def test_mean_capacity_is_pi_dot_c_and_levels_are_normalised():
    m = from_arrays([4.0, 2.4, 1.2], Q3, epoch=2.5)  # 2.5 model time units = 10 packet times at 4
    sc = Scenario(delta=10, bmax=3, wmax=16, capacity=m)
    assert sc.levels == (1.0, 0.6, 0.3)
    assert sc.mean_capacity == pytest.approx(float(m.stationary @ np.array([1.0, 0.6, 0.3])), rel=1e-15)
    same = Scenario(delta=10, bmax=3, wmax=16, capacity=from_arrays([1.0, 0.6, 0.3], Q3, epoch=10.0))
    _close(analyze(sc), analyze(same), 1e-12)


def test_two_state_in_other_units_equals_todays_engine():
    """Levels (2, 1) per model time unit, epoch 20 model units = 40 packet times at the peak."""
    m = CapacityModel([2.0, 1.0], transition=[[0.95, 0.05], [0.05, 0.95]], epoch=20.0)
    _close(analyze(Scenario(delta=40, bmax=10, psi=20, rate_ratio=0.5)),
           analyze(Scenario(delta=40, bmax=10, capacity=m)), 1e-12)


def test_sub_epoch_and_generator_models():
    """An epoch Delta/n uses P^n; a generator is sampled every Delta (expm)."""
    P = np.array(Q3)
    fine = Scenario(delta=12, bmax=3, wmax=16, capacity=from_arrays([1.0, 0.6, 0.3], P, epoch=4.0))
    coarse = Scenario(delta=12, bmax=3, wmax=16,
                      capacity=from_arrays([1.0, 0.6, 0.3], np.linalg.matrix_power(P, 3), epoch=12.0))
    np.testing.assert_allclose(fine.rate_matrix, coarse.rate_matrix, rtol=0, atol=1e-15)
    gen = CapacityModel([1.0, 0.5], generator=[[-0.01, 0.01], [0.02, -0.02]])
    sc = Scenario(delta=12, bmax=3, wmax=16, capacity=gen)
    np.testing.assert_allclose(sc.rate_matrix, gen.discretize(12.0).transition, rtol=0, atol=1e-15)
    assert sc.mean_capacity == pytest.approx(1.0 * 2 / 3 + 0.5 / 3, rel=1e-12)


# ---- refusals --------------------------------------------------------------------------
def test_outage_refused():
    m = from_arrays([1.0, 0.0], [[0.9, 0.1], [0.5, 0.5]], epoch=10.0)
    with pytest.raises(ValueError, match=r"levels\[1\]=0.0 is invalid for the Markov renewal engine"):
        Scenario(delta=10, capacity=m)


@pytest.mark.parametrize("epoch", [7.0, 15.0, 25.0])
def test_epoch_must_divide_delta(epoch):
    with pytest.raises(ValueError, match=r"capacity.epoch=.* is invalid: .*round trip delta=10"):
        Scenario(delta=10, bmax=3, capacity=from_arrays([1.0, 0.5], [[0.9, 0.1], [0.1, 0.9]], epoch=epoch))


@pytest.mark.parametrize("kw", [{"psi": 20.0}, {"rate_ratio": 0.5}])
def test_psi_or_rate_ratio_with_capacity_refused(kw):
    with pytest.raises(ValueError, match=f"{next(iter(kw))}=.* is invalid together with capacity"):
        Scenario(delta=40, capacity=two_state(0.5, 20, 40), **kw)


def test_other_refusals():
    m = from_arrays([1.0, 0.6, 0.3], Q3, epoch=10.0)
    with pytest.raises(ValueError, match="capacity=.* is invalid: must be a tcpabr_model.capacity.CapacityModel"):
        Scenario(delta=10, capacity={"levels": [1.0]})
    with pytest.raises(ValueError, match=r"source_rate=0.2 is invalid"):
        Scenario(delta=10, capacity=m, feedback="constant", source_rate=0.2)
    with pytest.raises(ValueError, match=r"delta \* min\(levels\) >= 1"):
        Scenario(delta=3, capacity=from_arrays([1.0, 0.3], [[0.9, 0.1], [0.1, 0.9]], epoch=3.0))
    sc = Scenario(delta=10, bmax=3, wmax=16, capacity=m)
    for f in (lambda: sc.p_switch, lambda: sc.with_psi(5.0)):
        with pytest.raises(ValueError, match="capacity"):
            f()
    sk = skeleton_for(sc)
    with pytest.raises(ValueError, match=r"rates.shape=\(2, 2\) is invalid"):
        sk.transition_matrix(0.1, 0.1)


def test_periodic_rate_chain_refused_not_answered():
    """A periodic 3-cycle per round trip can lock the chain into phase classes: an
    ErgodicityError (a ModelError), never a silent number."""
    sc = Scenario(delta=10, bmax=3, wmax=16,
                  capacity=from_arrays([1.0, 0.6, 0.3], [[0, 1, 0], [0, 0, 1], [1, 0, 0]], epoch=10.0))
    try:
        r = analyze(sc)
    except ModelError:
        return
    # here the losses mix the phases (one closed class): the answer must be the assembled one
    _close(r, analyze(sc, method="sparse-direct"), 1e-10)


# ---- CLI and sweep -----------------------------------------------------------------------
def test_cli_capacity_file(tmp_path, capsys):
    path = tmp_path / "k3.toml"
    save_model(from_arrays([1.0, 0.6, 0.3], Q3, epoch=10.0), path)
    assert main(["analyze", "--delta", "10", "--bmax", "3", "--wmax", "16", "--capacity", str(path),
                 "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["capacity_levels"] == [1.0, 0.6, 0.3] and out["scenario"]["psi"] is None
    assert 0 < out["conservative"] <= out["optimistic"] <= 1
    assert main(["analyze", "--delta", "10", "--bmax", "3", "--wmax", "16", "--capacity", str(path)]) == 0
    assert "3 levels 1, 0.6, 0.3" in capsys.readouterr().out


def test_cli_two_state_file_prints_todays_numbers(tmp_path, capsys):
    path = tmp_path / "k2.json"
    save_model(two_state(0.5, 20, 40), path)
    assert main(["analyze", "--capacity", str(path), "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main(["analyze", "--json"]) == 0
    b = json.loads(capsys.readouterr().out)
    for k in ("optimistic", "conservative", "optimistic_eq18", "n_states", "nnz"):
        assert a[k] == pytest.approx(b[k], rel=1e-12, abs=0)


@pytest.mark.parametrize("make,word", [
    (lambda d: d / "missing.json", "cannot read the model file"),
    (lambda d: (d / "bad.json").write_text('{"levels": ') and d / "bad.json", "not a JSON file"),
    (lambda d: (d / "bad.toml").write_text("levels = [1.0") and d / "bad.toml", "not a TOML file"),
])
def test_cli_capacity_bad_file_one_line_exit_2(tmp_path, capsys, make, word):
    assert main(["analyze", "--capacity", str(make(tmp_path))]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err


def test_cli_capacity_with_psi_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "k2.json"
    save_model(two_state(0.5, 20, 40), path)
    assert main(["analyze", "--capacity", str(path), "--psi", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--psi=5.0 is invalid together with capacity" in err


def test_sweep_analysis_method_takes_a_model_file(tmp_path):
    path = tmp_path / "k3.json"
    save_model(from_arrays([1.0, 0.6, 0.3], Q3, epoch=10.0), path)
    row = analysis_point({"delta": 10, "bmax": 3, "wmax": 16, "capacity": str(path)}, 0)
    ref = analyze(Scenario(delta=10, bmax=3, wmax=16, capacity=from_arrays([1.0, 0.6, 0.3], Q3, epoch=10.0)))
    assert row["optimistic"] == ref.optimistic and row["solver"] == ref.method
