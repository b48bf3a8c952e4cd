"""The chain build's speed-ups change no number (issue 23: "each analysis <= 10 s").

* Bit for bit (the skeleton; the bounds to 1e-12, ``_near_stored``): small chains over a measured link's service patterns (TCP alone, timeout-only
  and SACK, both ACK clocks, and INSTCAP) against values stored *before* the build was sped up
  (the bounds as ``float.hex`` and a SHA-256 of every skeleton array), so that a change of the
  computation that moves the last bit of any number fails here.
* Bit for bit, INSTCAP over service patterns (``feedback='instcap'``, the patterned ABR build,
  K = 3 levels: the matrix-free structured solve with its SCC blocks inverted once): timeout-only
  and SACK, two buffers, a minimum cell rate, the drained loss cycle with ``bmax_counts_service``
  off, against values stored from the tree before the INSTCAP speed-ups (branch speed-instcap).
* The shared-prefix replays of the build (``patterns.pattern_tcp_alone_prefix`` / ``_resume``,
  ``recovery.pattern_tcp_alone_loss_prefix`` / ``_resume``) against the one-call kernels they
  stand for, on every window increment ``N``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpabr_model.capacity import read_trace
from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov.kernels.interval import pattern_tcp_alone_outcome
from tcpabr_model.markov.kernels.patterns import (ack_opportunity_table, pattern_tcp_alone_prefix,
                                                  pattern_tcp_alone_resume)
from tcpabr_model.markov.kernels.recovery import (
    pattern_loss_counts,
    pattern_tcp_alone_loss_prefix,
    pattern_tcp_alone_loss_resume,
)
from tcpabr_model.markov.skeleton import skeleton_for
from tcpabr_model.trace_study import fit_link

DATA = Path(__file__).parent / "data"

# (feedback, tcp, ack_clock, states, conservative, prediction, optimistic, loss probability,
#  SHA-256 of the skeleton arrays), computed with the build of commit e991f92 (before the
#  speed-ups of the branch speed-tcpalone)
REFERENCE = [
    ("none", "timeout-only", "at-epoch", 453, "0x1.2df55c7865704p-2", "0x1.45bbeee2c1011p-2", "0x1.7666f762f42d7p-2",
     "0x1.299cd57231efcp-3", "401585af6f15db8439bc94a2bb100dc317d2a88946b625236a8dbec39ec62b33"),
    ("none", "sack", "at-epoch", 453, "0x1.857f88e5c810ap-2", "0x1.a6b815bf7f176p-2", "0x1.b7ac4facd3891p-2",
     "0x1.1d1b95ff74c93p-3", "e0a0e33cb61ff9d13abb7ba89b10441686f62a629a09e5c93fbacb14e70486ae"),
    ("none", "timeout-only", "after-service", 687, "0x1.2d3507161c3aep-2", "0x1.44ebe655eb4c9p-2",
     "0x1.75829a51b4483p-2", "0x1.29430f7a73081p-3",
     "30f8f637c3c0bf33d4ae1628f9577e4d14c9421fb35e17b7f0dd540c7e882b2e"),
    ("instcap", "timeout-only", "at-epoch", 1255, "0x1.294fae9c47269p-2", "0x1.3d66bc491e0ecp-2",
     "0x1.6c086a1712e7ap-2", "0x1.20bfa25209b1cp-3",
     "2f3e9aff295360da5fe7fe447b989333a32362a6a27b514fd13cff520f6e27f7"),
]


# INSTCAP over the same link: (bmax, wmax, tcp, mcr, loss_cycle, bmax_counts_service, states, conservative,
#  prediction, optimistic, loss probability, SHA-256 of the skeleton arrays), computed with the tree of
#  commit ec06507 (before the branch speed-instcap); the two SACK rows again when docs/model.md sec. 12.1
#  (M8'') gave the recovery that the timer interrupts its own window (prediction 0.3855 -> 0.3747 and
#  0.4457 -> 0.4321; the timeout-only rows unchanged)
REFERENCE_INSTCAP = [
    (6, 40, "sack", 0.0, "paper", True, 1255, "0x1.65d276945d07fp-2", "0x1.7faa930ff5692p-2", "0x1.94fec0e04770bp-2",
     "0x1.12f2dc74931c5p-3", "4a0ab118123e91e230f775af6298ee72d6861533842060552c19721e80920216"),
    (10, 60, "timeout-only", 0.0, "paper", True, 1816, "0x1.664d834ecd596p-2", "0x1.81ce24c5bc141p-2",
     "0x1.af52d513d0a89p-2", "0x1.d3e47f538d6b9p-4", "4569d77c754f661615080951e203425c2563cddb1f10d575e9be174c8b3d01ec"),
    (10, 60, "sack", 0.0, "paper", True, 1816, "0x1.a05f7a361c6f3p-2", "0x1.ba6f7189e04a2p-2", "0x1.c6eb064412f6cp-2",
     "0x1.b8c49617695dep-4", "c9cc6161632f226016bb9fc1ef8c3e548ffd2e3239e2b403d8f11c8ff33cd7da"),
    (8, 50, "timeout-only", 0.25, "paper", True, 724, "0x1.4f711a7b01710p-2", "0x1.69d6c59a09d7ap-2",
     "0x1.99ba9f47c29f3p-2", "0x1.06aad1cae0f6dp-3", "b67d14af561e509b1869ef49c67e53ec9575a54f7276c61ac32d768309189a6c"),
    (8, 50, "timeout-only", 0.0, "drain", False, 1555, "0x1.4e5f5cd532b2dp-2", "0x1.94667db14ce0ep-2",
     "0x1.97d4d70782950p-2", "0x1.e7f03763e795bp-4", "23b94eef336305e839b93eeed1960cbcb1f844680b9b1cc38cb48dbe18ab912c"),
]


def _near_stored(r, stored) -> None:
    """The bounds and loss probability within 1e-12 (relative) of the stored ``float.hex`` values.
    The skeleton is compared bit for bit (``_digest``); the solve's last bits depend on the CPU's
    BLAS and SIMD kernels (stored on one machine, an AVX2-only AMD EPYC moves 1-3 ulps), so the
    numbers get issue 23's 1e-12."""
    got = (r.conservative, r.prediction, r.optimistic, r.loss_probability)
    for g, h in zip(got, stored):
        assert abs(g - float.fromhex(h)) <= 1e-12 * abs(float.fromhex(h)), (g.hex(), h)


def _digest(sk) -> str:
    h = hashlib.sha256()
    for a in (sk.states, sk.nl_ptr, sk.nl_prob, sk.targets(), sk.ls_ptr, sk.ls_m, sk.ls_prob, sk.p_loss, sk.post, sk.ss,
              sk.u, sk.reg, sk.j_loss) + (sk.recovery or ()):
        h.update(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes())
    return h.hexdigest()


def _full(sc):
    """The skeleton with every state, those that no chain of ``P``'s zeros enters included (docs/model.md
    sec. 10, "States never entered"): the build the stored digests pin; the analysis solves the chain
    without them (``skeleton_for``), whose bounds are the full chain's to 1e-12."""
    from tcpabr_model.markov.skeleton import _build

    sk = skeleton_for(sc)
    key = sc.structure_key()
    assert key[12] is not None and sk.n_states < _build(key[:12] + (None,), 10**6).n_states
    return _build(key[:12] + (None,), 10**6)


@pytest.fixture(scope="module")
def outage_link():
    return fit_link(read_trace(DATA / "markov3_outage.down"), 0.1, states=3, patterns=4)


@pytest.mark.parametrize("ref", REFERENCE, ids=lambda r: "-".join(r[:3]))
def test_chain_over_service_patterns_is_bit_for_bit_the_stored_one(outage_link, ref):
    fb, tcp, clock, n, cons, pred, opt, ploss, digest = ref
    m = outage_link.model
    sc = Scenario(delta=outage_link.rtt * float(m.levels.max()), bmax=6, wmax=40, feedback=fb, capacity=m,
                  service=outage_link.service, tcp=tcp, ack_clock=clock)
    r = analyze(sc)
    sk = _full(sc)
    assert sk.n_states == n
    _near_stored(r, (cons, pred, opt, ploss))
    assert _digest(sk) == digest


@pytest.mark.parametrize("ref", REFERENCE_INSTCAP, ids=lambda r: "-".join(str(v) for v in r[:6]))
def test_instcap_over_service_patterns_is_bit_for_bit_the_stored_one(outage_link, ref):
    bmax, wmax, tcp, mcr, loss_cycle, counts_service, n, cons, pred, opt, ploss, digest = ref
    m = outage_link.model
    sc = Scenario(delta=outage_link.rtt * float(m.levels.max()), bmax=bmax, wmax=wmax, feedback="instcap", capacity=m,
                  service=outage_link.service, tcp=tcp, mcr=mcr, loss_cycle=loss_cycle,
                  bmax_counts_service=counts_service)
    r = analyze(sc)
    sk = _full(sc)
    assert sk.n_states == n
    assert r.method == "structured (matrix-free)"
    _near_stored(r, (cons, pred, opt, ploss))
    assert _digest(sk) == digest


times = st.lists(st.integers(1, 40), max_size=25).map(lambda xs: sorted(x / 4.0 for x in xs))


def _queue_integral(b, d, ninc, g, opp, o0, o1, phase, a0, a1, delta):
    """The integral of the queue over (0, delta] by an event replay: the ``b`` queued from 0, the
    ACKs' one or two arrivals (the last ``ninc`` two) after the opportunities up to their time,
    one departure per opportunity while the queue is not empty (no buffer limit: loss-free)."""
    acks = a1 - a0 >= d
    events = [(float(opp[k]), 0, -1) for k in range(o0, o1)]
    events += [(float(opp[a0 + i]) if acks else (i + phase) * g, 1, 2 if i >= d - ninc else 1) for i in range(d)]
    events.sort(key=lambda e: (e[0] - (1e-9 if e[1] == 0 else 0.0), e[1]))   # opportunities first (EPS)
    q, t0, area = b, 0.0, 0.0
    for t, kind, n in events:
        area += q * (t - t0)
        t0 = t
        if kind == 0:
            q = max(q - 1, 0)
        else:
            q += n
    return area + q * (delta - t0)


@settings(max_examples=300, deadline=None)
@given(b=st.integers(0, 8), bmax=st.integers(1, 8), d=st.integers(0, 14), opp=times, acks=times,
       g=st.sampled_from([0.25, 1.0, 1.25, 3.0]), phase=st.sampled_from([0.0, 1.0]), lmin=st.integers(0, 14),
       table=st.booleans())
def test_shared_prefix_replays_equal_the_one_call_kernels(b, bmax, d, opp, acks, g, phase, lmin, table):
    """Every N with d - N = lmin..d from one prefix: the outcome of pattern_tcp_alone_outcome and
    the loss interval's (J, J2, L) of pattern_loss_counts, ACKs at a pattern's times (merged by
    the prefix, or read from ack_opportunity_table's pairs as the build does) or at the clock; the
    loss interval's prefix started where the loss-free one stopped (its first loss, or lmin)."""
    b = min(b, bmax)
    lmin = min(lmin, d)
    o = np.array(opp + acks, dtype=float)
    o0, o1, a0, a1 = 0, len(opp), len(opp), len(opp) + len(acks)
    pre = np.full((2, d + 2, 3), -7, dtype=np.int64)
    pre2 = np.full((2, d + 2, 5), -7, dtype=np.int64)
    jt = np.full((2, d + 1), -7, dtype=np.int64)
    row = 1
    at = np.full((2, d + 1), np.nan)
    pre_area = np.full((2, d + 2), np.nan)
    cs = np.concatenate(([0.0], np.cumsum(o)))
    tab = ack_opportunity_table(np.array([o0, o1, a1]), o, table)
    first = pattern_tcp_alone_prefix(b, d, g, o, o0, o1, bmax, phase, a0, a1, lmin, d, pre, jt, row, at, pre_area,
                                     cs, tab, (0, 1))
    i0 = min(first, lmin)
    pattern_tcp_alone_loss_prefix(i0, pre[row, i0, 0], pre[row, i0, 1], bmax, lmin, d, pre2, jt, row)
    work = np.empty(4 * d + 8)
    for ninc in range(d - lmin + 1):
        ll = d - ninc
        want = tuple(pattern_tcp_alone_outcome(b, d, ninc, g, o, o0, o1, bmax, phase, a0, a1))
        if first < ll:
            got = (True, first, 0, 0)
        else:
            got = tuple(pattern_tcp_alone_resume(d, ll, o1, bmax, pre[row, ll, 0], pre[row, ll, 1], pre[row, ll, 2],
                                                 jt, row))[:4]
            # the queue's integral over (0, Delta] (docs/model.md sec. 13) against an event replay
            area = pattern_tcp_alone_resume(d, ll, o1, bmax, pre[row, ll, 0], pre[row, ll, 1], pre[row, ll, 2],
                                            jt, row, pre_area[row, ll], at, cs, 10.0)[4]
            if not want[0]:
                assert area == pytest.approx(_queue_integral(b, d, ninc, g, o, o0, o1, phase, a0, a1, 10.0),
                                             abs=1e-9)
        assert got == want
        want2 = tuple(pattern_loss_counts(1, 0, b, d, ninc, g, g, o, o0, o1, bmax, 10.0, phase, a0, a1, work))
        got2 = tuple(pattern_tcp_alone_loss_resume(d, ll, bmax, *(int(v) for v in pre2[row, ll]), jt, row))
        assert got2 == want2


SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"


@pytest.mark.skipif(not (SHARED / "TMobile-LTE-short.down").is_file(), reason="the shared cellular traces are absent")
def test_instcap_on_a_measured_link_has_the_same_bits_at_any_blas_thread_count():
    """A study point whose SCC blocks (up to 167 states) and dot products (43,385 states) are
    large enough for OpenBLAS to split over threads: the analysis pins BLAS to one thread
    (solvers.SOLVE_BLAS_THREADS), so the caller's thread count changes no bit.  Stored with
    OPENBLAS_NUM_THREADS=1 (its default on 2 cores gave other last bits); first from ec06507, again
    when coincident opportunities came to be served through their millisecond (docs/model.md
    sec. 11: 43,385 -> 46,857 states)."""
    from tcpabr_model.markov import skeleton as _skeleton
    from tcpabr_model.markov.solvers import blas_threads
    from tcpabr_model.trace_study import link_scenario, trace_halves

    link = fit_link(trace_halves(read_trace(SHARED / "TMobile-LTE-short.down"))[0], 0.05, patterns=4)
    # the bits stored are III-B.4's with eq. 1's coins (the measured-link path's defaults are now 'timer'
    # and the ACK counter, docs/traces.md sec. 7.2n)
    sc = link_scenario(link, 5, "instcap", loss_cycle="paper", ca_increment="binomial")
    got = []
    for threads in (2, 1):
        _skeleton._CACHE.clear()
        with blas_threads(threads):
            r = analyze(sc)
        sk = _full(sc)                 # the stored digest is the build with every state (sec. 10)
        assert sk.n_states == 46857
        _near_stored(r, ("0x1.00d77c492c918p-4", "0x1.2fbe4e8e67010p-4", "0x1.8121eec3142d1p-4",
                         "0x1.05e4dad381c2bp-2"))
        got.append((r.conservative, r.prediction, r.optimistic, r.loss_probability))
        assert _digest(sk) == "a7e5c580b4bd998aec9f85811ab0b9ad5baa1ca4a89484c1c8462c80ecc47912"
    assert got[0] == got[1]          # on one machine, the caller's BLAS threads change no bit
