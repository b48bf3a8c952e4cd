"""docs/model.md sec. 11b: the fixed RTO in a silence of two round trips across the epochs
(``Scenario(silence='patterns')``): the probability table by hand, the default unchanged, the checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov import service as service_mod
from tcpabr_model.markov.service import silence_timeouts
from tcpabr_model.markov.skeleton import _CACHE, skeleton_for
from tcpabr_model.trace_study import analyze_link, fit_link
from tcpabr_model.capacity import read_trace

DATA = Path(__file__).resolve().parent / "data"


def _flat(patterns):
    """The kernels' flat pattern arrays of ``patterns[k] = [(times, weight), ...]``."""
    pat_ptr, pat_w, opp_ptr, opp_t = [0], [], [0], []
    for level in patterns:
        for times, w in level:
            opp_t.extend(times)
            opp_ptr.append(len(opp_t))
            pat_w.append(w)
        pat_ptr.append(len(pat_w))
    return pat_ptr, pat_w, opp_ptr, opp_t


def test_the_table_by_hand():
    """State 0 an outage; A's patterns end at 2 or 8 and start at 1 or 5, B's one pattern spans 3-6.
    After A -> outage -> A the timer beats the first ACK only for f = 5 after l = 2 (1/4); after B -> outage
    -> A never (no f > 6); after A -> outage -> B for l = 2 (1/2), after B -> outage -> B never."""
    P = np.array([[0.2, 0.5, 0.3], [0.3, 0.6, 0.1], [0.2, 0.2, 0.6]])
    pats = [[((), 1.0)], [((1.0, 2.0), 0.5), ((5.0, 8.0), 0.5)], [((3.0, 4.0, 6.0), 1.0)]]
    q = silence_timeouts(P, *_flat(pats))
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1.0))])
    pi /= pi.sum()
    lead = {(j, s): pi[j] * P[j, 0] * P[0, s] for j in (1, 2) for s in (1, 2)}
    assert q[0] == 0.0                     # no ACK returns after an outage state's own interval
    assert q[1] == pytest.approx(lead[1, 1] / (lead[1, 1] + lead[2, 1]) * 0.25, rel=1e-12)
    assert q[2] == pytest.approx(lead[1, 2] / (lead[1, 2] + lead[2, 2]) * 0.5, rel=1e-12)
    # a chain without an outage state has no such silence
    assert np.all(silence_timeouts(P[1:, 1:] / P[1:, 1:].sum(axis=1, keepdims=True), *_flat(pats[1:])) == 0.0)


def _outage_link():
    return fit_link(read_trace(DATA / "markov3_outage.down"), 0.1, states=3, patterns=4)


def _base(link):
    m = link.model
    return dict(delta=link.rtt * float(m.levels.max()), bmax=6, wmax=40, capacity=m, service=link.service,
                loss_cycle="timer")


@pytest.mark.parametrize("feedback", ["none", "instcap"])
def test_a_table_of_zeros_is_the_default_and_ones_add_timeouts(monkeypatch, feedback):
    link = _outage_link()
    base = dict(_base(link), feedback=feedback)
    r0 = analyze(Scenario(**base))
    n_sure = int(np.sum(skeleton_for(Scenario(**base)).p_loss == 1.0))
    _CACHE.clear()
    monkeypatch.setattr(service_mod, "silence_timeouts", lambda P, *a: np.zeros(P.shape[0]))
    rz = analyze(Scenario(**base, silence="patterns"))
    assert (rz.prediction, rz.conservative, rz.optimistic) == (r0.prediction, r0.conservative, r0.optimistic)
    _CACHE.clear()
    monkeypatch.setattr(service_mod, "silence_timeouts", lambda P, *a: np.ones(P.shape[0]))
    sc1 = Scenario(**base, silence="patterns")
    r1 = analyze(sc1)
    # every state with z = 1 that returns ACKs now times out too: more sure timeouts, more loss events
    assert int(np.sum(skeleton_for(sc1).p_loss == 1.0)) > n_sure
    assert r1.loss_probability / r1.mean_cycle_length > r0.loss_probability / r0.mean_cycle_length
    assert r1.conservative <= r1.prediction <= r1.optimistic <= 1.0
    _CACHE.clear()


def test_the_fitted_links_table_and_the_checks():
    link = _outage_link()
    sc = Scenario(**_base(link), feedback="instcap", silence="patterns")
    q = np.array(sc.structure_key()[13])
    served = np.array(sc.levels) * sc.delta
    assert q.shape == served.shape and np.all((q >= 0.0) & (q <= 1.0)) and np.all(q[served <= 0.0] == 0.0)
    assert Scenario(**_base(link), feedback="instcap").structure_key()[13] is None
    a = analyze_link(link, 6, "instcap", wmax=40, silence="patterns")
    assert a.conservative <= a.prediction <= a.optimistic <= 1.0
    with pytest.raises(ValueError, match="silence='patterns' is invalid without service"):
        Scenario(delta=40.0, bmax=10, psi=10.0, rate_ratio=0.5, silence="patterns")
    with pytest.raises(ValueError, match="silence"):
        Scenario(**_base(link), silence="always")


def test_the_cli_option(capsys):
    from tcpabr_model.cli import main

    assert main(["analyze", "--silence", "patterns", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "silence='patterns' is invalid without service" in err
    assert main(["analyze", "--trace", str(DATA / "markov3_outage.down"), "--rtt", "0.1", "--bmax", "6",
                 "--wmax", "40", "--states", "3", "--patterns", "4", "--feedback", "instcap", "--silence",
                 "patterns", "--no-progress", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["model"]["silence"] == "patterns"
    assert out["conservative"] <= out["prediction"] <= out["optimistic"] <= 1.0
