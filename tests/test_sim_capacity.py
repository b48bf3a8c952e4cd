"""The capacity process: embedding, sojourn means (k * SE tolerances), reproducibility."""

import numpy as np
import pytest

from tcpabr_model.sim import capacity_path
from tcpabr_model.sim.capacity import capacity_integral


def test_embedded_changes_only_at_multiples_of_period():
    rng = np.random.default_rng(3)
    t, s0 = capacity_path(rng, 1e6, tau=2000.0, mode="embedded", period=480.0)
    fin = t[np.isfinite(t)]
    assert np.all(np.diff(fin) > 0)
    np.testing.assert_array_equal(fin / 480.0, np.round(fin / 480.0))
    # geometric sojourns with mean psi periods: check the mean within 4 standard errors
    soj = np.diff(fin) / 480.0
    psi = 2000.0 / 480.0
    se = np.sqrt(psi * (psi - 1)) / np.sqrt(soj.size)  # geometric sd = sqrt(1-p)/p
    assert abs(soj.mean() - psi) < 4 * se


def test_continuous_sojourns_are_exponential_with_mean_tau():
    rng = np.random.default_rng(4)
    t, _ = capacity_path(rng, 2e6, tau=37.0)
    soj = np.diff(t[np.isfinite(t)])
    assert abs(soj.mean() - 37.0) < 4 * 37.0 / np.sqrt(soj.size)
    from scipy import stats
    assert stats.kstest(soj, "expon", args=(0, 37.0)).pvalue > 0.001


def test_path_reproducible_from_seed():
    a = capacity_path(np.random.default_rng(11), 1e5, 50.0)
    b = capacity_path(np.random.default_rng(11), 1e5, 50.0)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]


def test_capacity_integral_reference():
    t = np.array([2.0, 5.0, np.inf])
    # high on [0,2), low on [2,5), high after
    assert capacity_integral(t, 0, 0.5, 0.0, 6.0) == pytest.approx(2 + 1.5 + 1)
    assert capacity_integral(t, 1, 0.5, 1.0, 3.0) == pytest.approx(0.5 + 1.0)


def test_bad_inputs():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="period=None"):
        capacity_path(rng, 10.0, 5.0, mode="embedded")
    with pytest.raises(ValueError, match="tau=1.0 is invalid"):
        capacity_path(rng, 10.0, 1.0, mode="embedded", period=2.0)
    with pytest.raises(ValueError, match="mode='x' is invalid"):
        capacity_path(rng, 10.0, 1.0, mode="x")
