"""Mahimahi traces: parsing and its refusals, binning, writing, synthetic traces."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tcpabr_model.capacity as cap

DATA = Path(__file__).parent / "data"


def _write(tmp_path, text, name="t.down"):
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


# ---------------------------------------------------------------- refusals name the file and line
@pytest.mark.parametrize("text, line, what", [
    ("1\n2\n1\n3\n", 3, "must be non-decreasing"),
    ("0\n5\n-3\n", 3, "a negative value"),
    ("1\n2.5\n3\n", 2, "not an integer"),
    ("1\nabc\n", 2, "not an integer"),
    ("1\n\n3\n", 2, "not an integer"),
    ("1\n2 3\n", 2, "not an integer"),
    ("1\n+2\n", 2, "not an integer"),
    ("1\n1_000\n", 2, "not an integer"),
    ("1\n1e3\n", 2, "not an integer"),
    ("0\n0\n", 2, "positive period"),
])
def test_malformed_traces_refused_naming_file_and_line(tmp_path, text, line, what):
    p = _write(tmp_path, text)
    with pytest.raises(ValueError, match=rf"^{p}: line {line}: .*{what}"):
        cap.read_trace(p)


@pytest.mark.parametrize("text", ["", "\n", b""])
def test_empty_trace_refused(tmp_path, text):
    p = _write(tmp_path, text)
    with pytest.raises(ValueError, match=rf"^{p}: the trace is empty"):
        cap.read_trace(p)


def test_missing_file_refused(tmp_path):
    with pytest.raises(ValueError, match="cannot read the trace"):
        cap.read_trace(tmp_path / "nope.down")


def test_crlf_and_final_newline_accepted(tmp_path):
    t = cap.read_trace(_write(tmp_path, "1\r\n1\r\n4\r\n"))
    assert t.times_ms.tolist() == [1, 1, 4] and t.period_ms == 4


# ---------------------------------------------------------------- round trip, binning
@settings(deadline=None, max_examples=30)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=200))
def test_write_read_round_trip(tmp_path_factory, gaps):
    times = np.cumsum(gaps) + 1
    t = cap.Trace(times, name="x")
    p = tmp_path_factory.mktemp("t") / "x.down"
    cap.write_trace(t, p)
    assert np.array_equal(cap.read_trace(p).times_ms, t.times_ms)


def test_binning_convention_by_hand():
    # period T = 30 ms, epoch 10 ms: epochs (0,10], (10,20], (20,30]; time 0 counts as T = 30
    t = cap.Trace([0, 1, 10, 10, 11, 25, 30])
    b = cap.bin_trace(t, 0.010)
    assert b.counts.tolist() == [3, 1, 3] and b.dropped == 0
    assert np.allclose(b.rates, [300.0, 100.0, 300.0])
    # epoch 20 ms: one whole epoch (0, 20]; the partial (20, 30] holds 25, 30 and 0 -> dropped
    b = cap.bin_trace(t, 0.020)
    assert b.counts.tolist() == [4] and b.dropped == 3


def test_binning_refuses_epoch_longer_than_period():
    with pytest.raises(ValueError, match="epoch=1.0 is invalid: must be at most the trace period 0.03 s"):
        cap.bin_trace(cap.Trace([10, 30]), 1.0)
    with pytest.raises(ValueError, match="epoch=0.0 is invalid"):
        cap.bin_trace(cap.Trace([10, 30]), 0.0)


def test_constant_file_bins_to_constant_rate():
    t = cap.read_trace(DATA / "constant_1000pps.down")
    assert t.period_ms == 2000 and t.mean_rate == 1000.0
    assert t.mean_bits_per_second == 12e6
    for e in (0.001, 0.01, 0.1, 0.5):
        b = cap.bin_trace(t, e)
        assert np.all(b.rates == 1000.0) and b.dropped == 0


# ---------------------------------------------------------------- synthetic traces
def _model3():
    return cap.from_arrays([0.0, 200.0, 600.0], [[0.6, 0.4, 0.0], [0.1, 0.8, 0.1], [0.0, 0.2, 0.8]],
                           epoch=0.1, time_unit=1.0, packet_bytes=1500)


def test_shipped_traces_are_reproducible(tmp_path):
    """The files in tests/data are what their recipe (tests/data/README.md) makes."""
    cap.write_trace(cap.Trace(np.arange(1, 2001)), tmp_path / "c.down")
    assert (tmp_path / "c.down").read_bytes() == (DATA / "constant_1000pps.down").read_bytes()
    cap.write_trace(cap.synthetic_trace(_model3(), 400, seed=7), tmp_path / "m.down")
    assert (tmp_path / "m.down").read_bytes() == (DATA / "markov3_outage.down").read_bytes()


def test_synthetic_trace_bins_back_to_its_levels_and_is_seeded():
    m = _model3()
    t = cap.synthetic_trace(m, 500, seed=3)
    b = cap.bin_trace(t, 0.1)
    assert b.n_epochs == 500 and b.dropped == 0
    assert set(np.unique(b.rates).tolist()) <= {0.0, 200.0, 600.0, 10.0}  # 10: the marker of an empty last epoch
    t2 = cap.synthetic_trace(m, 500, seed=3)
    assert np.array_equal(t.times_ms, t2.times_ms)
    assert not np.array_equal(t.times_ms, cap.synthetic_trace(m, 500, seed=4).times_ms)


def test_synthetic_fractional_levels_carry():
    """1.5 packets per epoch: counts alternate 1, 2 and total exactly 1.5 per epoch."""
    m = cap.from_arrays([15.0], [[1.0]], epoch=0.1, time_unit=1.0)
    b = cap.bin_trace(cap.synthetic_trace(m, 1000, seed=1), 0.1)
    assert set(b.counts.tolist()) == {1, 2} and b.counts.sum() == 1500


def test_synthetic_trace_refusals():
    with pytest.raises(ValueError, match="time_unit=None is invalid"):
        cap.synthetic_trace(cap.two_state(0.5, 2, 4), 10, seed=0)
    with pytest.raises(ValueError, match="whole number"):
        cap.synthetic_trace(cap.from_arrays([1.0], [[1.0]], epoch=0.0005, time_unit=1.0), 10, seed=0)
    with pytest.raises(ValueError, match="discrete-time"):
        cap.synthetic_trace(cap.two_state(0.5, 2, 4, time="continuous"), 10, seed=0)


def _patterns3():
    """Patterns of _model3's levels at its 0.1 s epoch: an outage, 20 packets as two bursts or
    evenly, 60 packets in the first half of the epoch."""
    return cap.ServicePatterns(epoch=0.1, offsets=(
        (np.zeros(0),),
        (np.repeat([0.010, 0.060], 10), np.linspace(0.005, 0.1, 20)),
        (np.linspace(0.001, 0.050, 60),)), weights=(np.ones(1), np.array([0.25, 0.75]), np.ones(1)))


def test_synthetic_trace_with_patterns_follows_the_same_path():
    """Each epoch holds one pattern of its level (counts 0, 20, 60 exactly), on the path drawn
    without patterns for the same seed; the two patterns of level 1 both occur; seeded."""
    m, sv = _model3(), _patterns3()
    even = cap.bin_trace(cap.synthetic_trace(m, 600, seed=5), 0.1).counts
    t = cap.synthetic_trace(m, 600, seed=5, service=sv)
    b = cap.bin_trace(t, 0.1)
    assert b.n_epochs == 600 and b.dropped == 0
    body = slice(0, 599)          # the last epoch may hold the period's end marker
    assert np.array_equal(b.counts[body], even[body])
    assert np.array_equal(t.times_ms, cap.synthetic_trace(m, 600, seed=5, service=sv).times_ms)
    # level 1's epochs: bursts at 10 and 60 ms (weight 1/4) or spread over the epoch
    u = (t.times_ms - 1) % 100 + 1
    ep = (t.times_ms - 1) // 100
    lvl1 = np.nonzero(b.counts == 20)[0]
    burst = [np.array_equal(np.unique(u[ep == k]), [10, 60]) for k in lvl1]
    assert 0.1 < np.mean(burst) < 0.45
    assert np.all(u[np.isin(ep, np.nonzero(b.counts == 60)[0])] <= 50)


def test_synthetic_trace_with_patterns_refusals():
    m, sv = _model3(), _patterns3()
    with pytest.raises(ValueError, match="service.epoch=0.2 is invalid"):
        cap.synthetic_trace(m, 10, seed=0, service=cap.ServicePatterns(epoch=0.2, offsets=sv.offsets,
                                                                      weights=sv.weights))
    with pytest.raises(ValueError, match="service has 2 levels"):
        cap.synthetic_trace(m, 10, seed=0, service=cap.ServicePatterns(epoch=0.1, offsets=sv.offsets[:2],
                                                                      weights=sv.weights[:2]))
    with pytest.raises(ValueError, match="must be a ServicePatterns"):
        cap.synthetic_trace(m, 10, seed=0, service="patterns")


def test_binned_trace_effective_capacity_is_eq25_on_cyclic_blocks():
    """Counts [3, 1, 3] at 10 ms, M = 2: cyclic blocks (3,1), (1,3), (3,3) -> sums 4, 4, 6."""
    b = cap.bin_trace(cap.Trace([0, 1, 10, 10, 11, 25, 30]), 0.010)
    d = 0.7
    want = -np.log(np.mean(np.exp(-d * np.array([4.0, 4.0, 6.0])))) / (2 * d) / 0.010
    assert b.effective_capacity(2, d) == pytest.approx(want, rel=1e-12)
    assert b.effective_capacity(2, np.inf) == pytest.approx(4.0 / 2 / 0.010, rel=1e-12)  # eq. 28
