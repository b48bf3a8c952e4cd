"""Delta calibration experiment (seed 004 Sec. IV) on the Markov renewal engine."""

import math

import pytest

import tcpabr_model.closed_forms as cf


def test_calibration_row_is_consistent():
    from tcpabr_model.closed_forms.calibration import calibrate_delta

    rows = calibrate_delta(2.0, 10)
    assert {r.bound for r in rows} == {"optimistic", "conservative"}
    for r in rows:
        assert 0.5 <= r.mu_star <= 0.75
        assert 0 < r.throughput <= r.mu_star + 1e-9
        if math.isfinite(r.delta_per_packet) and r.delta_per_packet > 0:
            # the calibrated delta reproduces mu* through eq. 23 (slot = Delta, C = Delta * rate)
            g = cf.effective_capacity_two_state(0.5, 0.5, 40.0, 20.0, r.delta_per_packet)
            assert g == pytest.approx(40.0 * r.mu_star, rel=1e-9)
            assert r.delta_rate_units == pytest.approx(40.0 * r.delta_per_packet)
            assert r.epsilon == pytest.approx(math.exp(-r.delta_per_packet * 10))


def test_calibration_bad_inputs():
    from tcpabr_model.closed_forms.calibration import calibrate_delta

    with pytest.raises(ValueError, match="psi"):
        calibrate_delta(0.5, 10)
    with pytest.raises(ValueError, match="bmax"):
        calibrate_delta(2.0, 0)
