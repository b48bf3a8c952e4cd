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
from tcpabr_model.markov.kernels.recovery import go_back_n_copies
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
    silent = d0 & (sk.duplicates > 0)
    assert silent.any() and np.all(sure[silent])
    assert np.allclose(sk.duplicates[silent], sk.window[silent], rtol=0, atol=1e-12)
    if feedback == "none":
        assert np.array_equal(silent, sure)
    else:
        assert np.all(sk.duplicates[d0 & ~silent] == 0.0) and (sure & ~silent).any()
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
