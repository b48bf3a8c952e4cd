"""docs/model.md sec. 15d: go-back-N's duplicates after a timeout off the credits
(``Scenario(duplicates='go-back-n')``): the copies of a loss by a go-back-N reference, the window after a
silence by hand, the default unchanged, the bounds' order."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest

from tcpabr_model.capacity import read_trace
from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov.kernels.recovery import abr_go_back_n_copies, go_back_n_copies
from tcpabr_model.markov.skeleton import skeleton_for
from tcpabr_model.trace_study import analyze_link, fit_link

DATA = Path(__file__).resolve().parent / "data"


def go_back_n_reference(holes: set[int], sent: int) -> int:
    """Segments ``0 .. sent - 1`` were sent, ``holes`` lost, the rest held by the receiver.  After the
    timeout the timeout-only sender restarts at the first hole with a window of 1; every new ACK grows it by
    one and it sends from ``snd_nxt`` (``max(snd_nxt, snd_una)``) while ``snd_nxt < snd_una + cwnd``; the
    network delivers in order and loses nothing more.  Returns the segments sent that the receiver held."""
    held = set(range(sent)) - holes
    una, nxt, cwnd, copies, q = min(holes), min(holes), 1, 0, deque()

    def send():
        nonlocal nxt, copies
        while nxt < una + cwnd:
            copies += nxt in held
            q.append(nxt)
            nxt += 1

    send()
    cum = una
    while q and una < sent:
        held.add(q.popleft())
        while cum in held:
            cum += 1
        if cum > una:
            una, cwnd, nxt = cum, cwnd + 1, max(nxt, cum)
            send()
    return copies


@pytest.mark.parametrize("n_lost", range(1, 16))
@pytest.mark.parametrize("after", [0, 1, 2, 5, 9, 20])
def test_copies_exact_for_every_other_arrival_lost(n_lost, after):
    """Holes at every other arrival (a rate halved under a full buffer, the chain's loss interval), then
    ``after`` arrivals admitted: the rule is the reference's count exactly."""
    holes = set(range(0, 2 * n_lost - 1, 2))
    j2 = (n_lost - 1) + after                 # admitted after the first loss
    assert go_back_n_copies(j2, n_lost) == go_back_n_reference(holes, 2 * n_lost - 1 + after)


def test_copies_flagged_for_other_gaps():
    """Contiguous holes: the rule is at or above the reference; holes at every third arrival: at or below
    (docs/model.md sec. 15d, the flag)."""
    for n_lost in range(2, 12):
        for after in range(0, 15):
            contiguous = go_back_n_reference(set(range(n_lost)), n_lost + after)
            assert go_back_n_copies(after, n_lost) >= contiguous - 1
            third = go_back_n_reference(set(range(0, 3 * n_lost - 2, 3)), 3 * n_lost - 2 + after)
            assert go_back_n_copies(2 * (n_lost - 1) + after, n_lost) <= third + 2
    assert go_back_n_copies(40, 1) == 0 == go_back_n_reference({0}, 41)   # one hole: the ACK jumps over all


def _abr_loss_interval(n, s, r, b, bmax, delta):
    """Arrivals at ``0, s, 2s, ...`` (``n`` of them), departures at ``r, 2r, ...`` up to ``delta`` from a
    queue of ``b`` (departures before arrivals at a tie), ``bmax`` places: the arrival index of the first
    loss, the admitted after it, the lost, the holes' positions among the arrivals."""
    events = sorted([(i * s, 1, i) for i in range(n)] + [(j * r, 0, j) for j in range(1, int(delta / r) + 1)])
    q, first, lost, holes, admitted_after = b, None, 0, [], 0
    for _, kind, i in events:
        if kind == 0:
            q = max(q - 1, 0)
        elif q >= bmax:
            first = i if first is None else first
            lost += 1
            holes.append(i)
        else:
            q += 1
            admitted_after += first is not None
    return first, admitted_after, lost, holes


@pytest.mark.parametrize("s,r,b", [(1.0, 2.0, 3), (1.0, 2.0, 5), (2.0, 3.0, 4), (1.0, 1.5, 2), (1.0, 4.0, 1)])
def test_abr_copies_from_the_interval(s, r, b):
    """Over ABR the build does not replay the loss interval; the rule reads J2 off the server's
    opportunities between the first loss and the last arrival, the buffer full from that loss on.  Against
    an event replay of a source at four, two, one and a half times the service rate (the server's grid, given
    as a pattern and as an even server): the replay's J2 and L exactly, and at twice the rate (alternate
    holes) the copies of the go-back-N reference."""
    bmax, delta = 6, 40.0
    n = int(delta / s)
    jl, j2, lost, holes = _abr_loss_interval(n, s, r, b, bmax, delta)
    assert lost > 1
    grid = np.arange(1, int(delta / r) + 1) * r
    want = go_back_n_copies(j2, lost)
    assert abr_go_back_n_copies(n, jl, s, r, grid, 0, grid.size) == want
    assert abr_go_back_n_copies(n, jl, s, r, None, 0, 0) == want
    if r == 2 * s:
        base = holes[0]
        assert want == go_back_n_reference({h - base for h in holes}, n - base)


def _outage_link():
    return fit_link(read_trace(DATA / "markov3_outage.down"), 0.1, states=3, patterns=4)


def _scenario(link, **kw):
    m = link.model
    return Scenario(delta=link.rtt * float(m.levels.max()), bmax=6, wmax=40, capacity=m, service=link.service,
                    loss_cycle="timer", **kw)


@pytest.fixture(scope="module")
def link():
    return _outage_link()


@pytest.mark.parametrize("feedback", ["none", "instcap"])
def test_window_after_a_silence(link, feedback):
    """Two intervals without an ACK time out with certainty and lose nothing: every state whose interval
    follows one without an ACK and that returns none itself (D = 0, p(x) = 1) sends its whole window W
    again; over TCP alone a state with D = 0 that does not time out cannot lose (no ACK, nothing sent), over
    INSTCAP it can (the source sends at its rate into a full buffer) and that loss is a loss, not a silence."""
    sk = skeleton_for(_scenario(link, feedback=feedback))
    d0 = sk.states[:, 2] == 0
    sure = d0 & (sk.p_loss == 1.0)
    if feedback == "none":
        assert sure.any() and np.array_equal(d0 & (sk.duplicates > 0), sure)
        assert np.allclose(sk.duplicates[sure], sk.window[sure], rtol=0, atol=1e-12)
    else:   # a sure loss of INSTCAP carries its holes' copies, a sure timeout W
        silent = sure & np.isclose(sk.duplicates, sk.window, rtol=0, atol=1e-12)
        assert silent.any() and (sure & ~silent).any()
    assert np.all(sk.duplicates >= 0.0)
    assert np.all(sk.duplicates <= sk.p_loss * sk.scenario_key[3] + 1e-9)   # at most a window W_max per timeout


@pytest.mark.parametrize("feedback", ["none", "instcap"])
def test_prediction_and_conservative_lower_optimistic_unchanged(link, feedback):
    base = analyze(_scenario(link, feedback=feedback))
    dup = analyze(_scenario(link, feedback=feedback, duplicates="go-back-n"))
    assert dup.prediction < base.prediction
    assert dup.conservative <= base.conservative
    assert dup.optimistic == base.optimistic
    assert dup.conservative <= dup.prediction <= dup.optimistic
    assert dup.scenario["duplicates"] == "go-back-n" and "duplicates" not in base.scenario
    assert dup.n_states == base.n_states and dup.mean_cycle_length == base.mean_cycle_length


def test_analyze_link_and_the_default(link):
    """``analyze_link(duplicates=)`` names it in the model; the default is the chain as it was (the study's
    numbers; tests/test_markov_bitwise.py and the golden values hold them)."""
    a = analyze_link(link, 6, "none", wmax=40)
    b = analyze_link(link, 6, "none", wmax=40, duplicates="go-back-n")
    assert "duplicates" not in a.model and b.model["duplicates"] == "go-back-n"
    assert b.prediction < a.prediction and b.optimistic == a.optimistic


def test_refused_where_it_is_not_derived(link):
    with pytest.raises(ValueError, match=r"duplicates='x' is invalid"):
        _scenario(link, duplicates="x")
    with pytest.raises(ValueError, match=r"duplicates='go-back-n' is invalid with loss_cycle='paper'"):
        Scenario(delta=40, bmax=10, psi=1.0, rate_ratio=0.5, feedback="none", duplicates="go-back-n")
