"""``tcpabr_model.stats.Estimate``: the Student-t interval, and its reading clipped to the
quantity's physical range (``ci_low`` / ``ci_high``, the text's "clipped at" note)."""

from __future__ import annotations

import math

import pytest

from tcpabr_model.stats import Estimate


def test_interval_below_zero_is_clipped_without_moving_mean_or_half_width():
    e = Estimate.from_samples([0.0, 24.0], limits=(0.0, None))    # mean 12, half-width 152.5 (t_1 = 12.71)
    assert e.mean == 12.0 and e.half_width == pytest.approx(12.706205 * 12.0, rel=1e-6)
    assert e.low == pytest.approx(12.0 - e.half_width) and e.low < 0      # the interval itself is unchanged
    assert e.ci_low == 0.0 and e.ci_high == e.high and e.clipped
    assert e.format(".4g") == f"12 +/- {e.half_width:.4g} (clipped at 0: 0 to {e.high:.4g})"
    d = e.to_dict()
    assert d["low"] == e.low and d["high"] == e.high and d["ci_low"] == 0.0 and d["ci_high"] == e.high
    assert d["mean"] == 12.0 and d["half_width"] == e.half_width


def test_both_ends_clipped_for_a_ratio():
    e = Estimate.from_samples([0.05, 0.95], limits=(0.0, 1.0))
    assert e.low < 0 and e.high > 1 and (e.ci_low, e.ci_high) == (0.0, 1.0)
    assert e.format() == f"0.5000 +/- {e.half_width:.4f} (clipped at 0 and 1: 0.0000 to 1.0000)"


def test_no_clipping_keeps_the_text_and_adds_equal_json_fields():
    e = Estimate.from_samples([10.0, 11.0, 12.0], limits=(0.0, None))
    assert not e.clipped and e.format() == f"11.0000 +/- {e.half_width:.4f}"
    assert (e.to_dict()["ci_low"], e.to_dict()["ci_high"]) == (e.low, e.high)
    # without known limits nothing is clipped, whatever the sign
    u = Estimate.from_samples([-5.0, 5.0])
    assert u.low < 0 and u.ci_low == u.low and not u.clipped and "clipped" not in u.format()


def test_no_interval_and_limits_the_data_contradicts():
    one = Estimate.from_samples([3.0], limits=(0.0, None))
    assert not one.clipped and one.format() == "3.0000 (no CI: n = 1)"
    d = one.to_dict()
    assert d["ci_low"] is None and d["ci_high"] is None and d["low"] is None
    # a mean outside the stated range: the limit is not applied (never an interval without its mean)
    e = Estimate.from_samples([1.1, 1.12], limits=(0.0, 1.0))
    assert e.low > 0 and e.mean > 1 and e.ci_high == e.high and not e.clipped


def test_clip_note_scales_for_the_unit_shown():
    e = Estimate.from_samples([0.001, 0.003], limits=(0.0, None))     # seconds, shown in ms
    assert e.clip_note(".4g", 1e3) == f" (clipped at 0: 0 to {1e3 * e.high:.4g})"
    assert Estimate.from_samples([0.002, 0.003]).clip_note() == ""
    assert math.isnan(Estimate.from_samples([1.0]).ci_high)


def test_two_digits_has_no_exponent_from_100_up():
    from tcpabr_model.stats import two_digits

    assert [two_digits(x) for x in (0.00021, 2.46, 15.0, 99.4, 160.2, 3449.0, 1.2e6)] == \
        ["0.00021", "2.5", "15", "99", "160", "3400", "1200000"]
