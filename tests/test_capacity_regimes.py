"""The two-timescale (regime x level) fit of issue 23 item 1b: fit_trace(..., regimes=R)."""

from pathlib import Path

import numpy as np
import pytest

import tcpabr_model.capacity as cap
from tcpabr_model.trace_study import analyze_link, fit_link

DATA = Path(__file__).parent / "data"


def _two_timescale_trace(seed=3, n=20_000):
    """A link whose level 500 packets/s belongs to a slow low regime {100, 500} and to a slow
    high regime {500, 900} (regimes switch with probability 0.01 per 10-ms epoch, levels with
    0.5): a chain on the level alone cannot tell in which regime 500 is."""
    p, q = 0.5, 0.01
    fast = np.array([[1 - p, p], [p, 1 - p]])
    slow = np.array([[1 - q, q], [q, 1 - q]])
    P = np.kron(slow, fast)     # states (low,100) (low,500) (high,500) (high,900)
    m = cap.CapacityModel([100.0, 500.0, 500.0, 900.0], transition=P, epoch=0.01, time_unit=1.0, packet_bytes=1500)
    return cap.synthetic_trace(m, n, seed), m


def test_one_regime_is_the_one_timescale_fit():
    a = cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1)
    b = cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, regimes=1)
    assert a == b and b.regimes == 1 and b.regime_of_state == () and b.regime_window == 0.0
    assert np.array_equal(a.model.levels, b.model.levels) and np.array_equal(a.model.transition, b.model.transition)
    assert "labels" not in b.to_dict() and b.labels.shape == (b.n_epochs,)


def test_regimes_recover_a_two_timescale_chain():
    tr, truth = _two_timescale_trace()
    f = cap.fit_trace(tr, epoch=0.01, states=4, regimes=2)
    assert f.regimes == 2 and f.regime_of_state == (0, 0, 1, 1)
    # each regime's levels, within 2 % (epochs near a regime switch can be put in the other
    # regime: the smoothed rate crosses the split between them a few epochs late or early)
    assert np.allclose(f.model.levels, [100, 500, 500, 900], rtol=0.02)
    P = f.model.transition
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # the occupancy of the fitted chain is the trace's (cyclic counts), state by state
    assert np.allclose(f.occupancy_model, f.occupancy_trace, atol=1e-12)
    # it keeps the slow correlation that the one-timescale chain forgets
    lags = [1, 10, 50, 100]
    x = cap.bin_trace(tr, 0.01).rates
    acf = cap.trace_autocorrelation(x, lags)
    one = cap.fit_trace(tr, epoch=0.01, states=3)
    gap_two = np.max(np.abs(cap.chain_autocorrelation(f.model, lags) - acf))
    gap_one = np.max(np.abs(cap.chain_autocorrelation(one.model, lags) - acf))
    assert gap_two < 0.1 < gap_one
    # the slow regime switches at about q = 0.01 per epoch in the fitted chain too (on
    # average over the regime's states: which level a switch leaves from is a matter of timing)
    pi = np.asarray(f.model.stationary)
    switch = float(pi[:2] @ P[:2, 2:].sum(axis=1)) / float(pi[:2].sum())
    assert 0.005 < switch < 0.02


def test_regime_window_default_is_the_correlation_time():
    tr, _ = _two_timescale_trace()
    x = cap.bin_trace(tr, 0.01).rates
    tau = cap.correlation_time(x, x.size // 4)
    f = cap.fit_trace(tr, epoch=0.01, states=4, regimes=2)
    assert f.regime_window == pytest.approx(max(2, tau) * 0.01)
    g = cap.fit_trace(tr, epoch=0.01, states=4, regimes=2, regime_window=0.5)
    assert g.regime_window == pytest.approx(0.5)
    assert cap.correlation_time(np.ones(10), 5) == 1     # a constant has no correlation time to speak of


def test_regime_errors():
    with pytest.raises(ValueError, match="states=3 is invalid with regimes=2: must be a multiple"):
        cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, states=3, regimes=2)
    with pytest.raises(ValueError, match="regimes=2 is invalid with method='hmm'"):
        cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, regimes=2, method="hmm")
    with pytest.raises(ValueError, match="regimes=0 is invalid"):
        cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, regimes=0)
    with pytest.raises(ValueError, match="regime_window=1e\\+06 is invalid|regime_window=1000000.0 is invalid"):
        cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, regimes=2, regime_window=1e6)


def test_regime_outage_state_only_where_outages_are_common():
    # the shipped 3-level trace has 17.5 % empty epochs: the low regime keeps an outage state
    f = cap.fit_trace(DATA / "markov3_outage.down", epoch=0.1, states=4, regimes=2)
    zeros = [i for i, c in enumerate(f.model.levels) if c == 0.0]
    assert zeros and all(f.regime_of_state[i] == 0 for i in zeros)
    lab = f.labels
    x = cap.bin_trace(cap.read_trace(DATA / "markov3_outage.down"), 0.1).rates
    # every epoch's state is one of its regime's, and empty epochs sit in an outage state or
    # (in a regime with fewer than 1 % of them) in its lowest level
    assert set(np.unique(lab)) <= set(range(f.states))
    assert np.all(f.model.levels[lab[x == 0.0]] <= np.min(f.model.levels[f.model.levels > 0]))


def test_fit_link_and_analysis_with_regimes():
    tr = cap.read_trace(DATA / "markov3_outage.down")
    link = fit_link(tr, 0.1, patterns=2, states=4, regimes=2)
    assert len(link.service.weights) == 4 and link.describe()["regimes"] == 2
    a = analyze_link(link, 4, "none")
    assert 0.0 < a.conservative <= a.prediction <= a.optimistic <= 1.0
    assert a.model["regime_window_s"] == pytest.approx(link.fit.regime_window)
