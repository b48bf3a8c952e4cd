"""The O(nonzeros) skeleton builder makes the same chain as the pre-issue-16 builder.

``tests/_markov_reference.py`` is the old builder, copied unchanged from main; every array
of the skeleton (states, loss-free entries and targets, loss-window laws, expected
rewards, regeneration index) must agree: integers exactly, floats to 1e-13.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _markov_reference import build_skeleton as reference_build
from tcpabr_model.markov.kernels.interval import MODE_ABR, MODE_TCP_ALONE
from tcpabr_model.markov.kernels.enumeration import build_skeleton
from tcpabr_model.markov.kernels.interval import binomial_pmf, binomial_window

SETTINGS = settings(max_examples=int(os.environ.get("HYP_EXAMPLES", 40)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
NAMES = ("states", "nl_ptr", "nl_prob", "nl_t", "ls_ptr", "ls_m", "ls_prob", "p_loss", "post",
         "ss", "u", "reg")


def _args(delta, bmax, wmax, feedback, ratio, mu):
    r = np.array([1.0, 1.0 / ratio])
    constant = feedback == "constant"
    s = np.full(2, 1.0 / mu) if constant else r.copy()
    if feedback == "none":
        return (MODE_TCP_ALONE, constant, float(delta), bmax, wmax, r, s, 0, 0, 1, 10**7)
    return (MODE_ABR, constant, float(delta), bmax, wmax, r, s, 1, 0, 0, 10**7)


def assert_same_chain(args):
    old = reference_build(*args)
    new = list(build_skeleton(*args))
    tail, tab = new[3]
    new[3] = tab[tail].astype(np.int64)    # the targets expanded (docs/model.md sec. 5a item 10)
    assert not old[12] and not new[12]
    for name, x, y in zip(NAMES, old[:12], new[:12]):
        assert x.shape == y.shape, name
        if x.dtype.kind == "f":
            np.testing.assert_allclose(y, x, rtol=0, atol=1e-13, err_msg=name)
        else:
            np.testing.assert_array_equal(y, x, err_msg=name)
    assert new[13] == len(old[2]) and new[14] == len(old[6])  # (state, N) and (state, m) entries


scenarios = st.tuples(
    st.one_of(st.integers(2, 60).map(float), st.floats(2.0, 60.0).map(lambda x: round(x, 2))),
    st.integers(1, 12),
    st.integers(2, 160),
    st.sampled_from(["instcap", "none", "constant"]),
    st.sampled_from([0.25, 0.3, 0.5, 0.75, 1.0]),
    st.floats(0.0, 1.0),
)


@given(sc=scenarios)
@SETTINGS
def test_builder_matches_reference(sc):
    delta, bmax, wmax, feedback, ratio, u = sc
    if delta * ratio < 1:
        delta = 1.0 / ratio
    mu = ratio + u * (1.0 - ratio)  # constant source rate in [rate_ratio, 1]
    assert_same_chain(_args(delta, bmax, wmax, feedback, ratio, mu))


@pytest.mark.parametrize("case", [
    (40, 10, 128, "instcap", 0.5, 1.0), (20, 10, 128, "instcap", 0.5, 1.0),
    (8, 3, 16, "instcap", 0.5, 1.0), (400, 100, 1280, "instcap", 0.5, 1.0),
    (40, 10, 128, "none", 0.5, 1.0), (200, 50, 640, "none", 0.5, 1.0),
    (40, 10, 128, "constant", 0.5, 0.8), (40, 10, 128, "constant", 0.5, 0.5),
    (40, 10, 128, "instcap", 1.0, 1.0), (7.5, 3, 30, "instcap", 0.3, 1.0),
])
def test_builder_matches_reference_on_paper_sized_chains(case):
    assert_same_chain(_args(*case))


@given(n=st.integers(0, 5000), p=st.floats(1e-5, 1.0))
@SETTINGS
def test_binomial_window_agrees_with_full_law(n, p):
    full = np.empty(n + 1)
    binomial_pmf(n, p, full)
    win = np.empty(n + 1)
    lo, hi = binomial_window(n, p, win)
    assert 0 <= lo <= hi <= n
    np.testing.assert_allclose(win[lo:hi + 1], full[lo:hi + 1], rtol=1e-12, atol=1e-300)
    assert full[:lo].max(initial=0.0) < 1e-17 and full[hi + 1:].max(initial=0.0) < 1e-17


@given(b=st.integers(0, 30), d=st.integers(0, 300), nfrac=st.floats(0, 1), ratio=st.sampled_from([0.25, 0.3, 0.5, 1.0]),
       r_low=st.booleans(), s_low=st.booleans(), bmax=st.integers(1, 30), delta=st.floats(4.0, 400.0),
       phase=st.sampled_from([0.0, 1.0]))
@SETTINGS
def test_tcp_alone_closed_form_equals_event_replay(b, d, nfrac, ratio, r_low, s_low, bmax, delta, phase):
    from tcpabr_model.markov.kernels.interval import EPS, interval_outcome
    from tcpabr_model.markov.kernels.interval import tcp_alone_first_loss, tcp_alone_outcome

    b = min(b, bmax)
    ninc = int(nfrac * d)
    r = 1.0 / ratio if r_low else 1.0
    s = 1.0 / ratio if s_low else 1.0
    g = s if d * s <= delta + EPS else delta / d
    work = np.empty(2 * d + 8)
    lost, j, _, b1, d1 = interval_outcome(MODE_TCP_ALONE, 0, b, d, ninc, r, s, bmax, delta, work, phase)
    first = tcp_alone_first_loss(b, d, g, r, bmax, phase)
    got = tcp_alone_outcome(b, d, ninc, g, r, bmax, delta, first, phase)
    assert got == ((True, j, 0, 0) if lost else (False, -1, b1, d1))
