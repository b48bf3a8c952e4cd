"""``Scenario(loss_cycle='drain')`` (docs/model.md sec. 14, issue 23): the timeout cycle
lasts until the queue ahead of and behind the lost packet has drained."""

import numpy as np
import pytest

from tcpabr_model import markov
from tcpabr_model.markov.skeleton import skeleton_for


def _sc(**kw):
    base = dict(delta=40, bmax=80, rate_ratio=0.5, psi=20, wmax=256, feedback="none")
    base.update(kw)
    return markov.Scenario(**base)


def test_paper_cycle_is_the_default_and_unchanged():
    sc = _sc()
    assert sc.loss_cycle == "paper"
    a, b = markov.analyze(sc), markov.analyze(_sc(loss_cycle="paper"))
    assert (a.prediction, a.conservative, a.optimistic) == (b.prediction, b.conservative, b.optimistic)


def test_drain_extra_round_trips_by_hand():
    """Constant capacity 1 packet per time unit, Delta 40, B_max 80: a loss with the buffer full
    has b + J = 80 packets ahead (2 intervals, n_a = 2) and behind = min(w - 1, 40 + 80) after
    it, so recovery starts at max(n_a + 2, n_e) with n_e = ceil((80 + behind) / 40)."""
    sk = skeleton_for(_sc(rate_ratio=1.0))
    C = np.repeat(np.arange(0, 200, dtype=float)[:, None] * 40.0, 2, axis=1)   # C[n] = 40 n (both levels are 1)
    extra, behind, draining = sk.drain_terms(C)
    lost = sk.p_loss > 0
    p = sk.p_loss[lost]
    ahead = sk.states[lost, 1] + sk.j_loss[lost] / p
    wbar = (sk.post[lost] - sk.j_loss[lost]) / p
    beh = np.clip(np.minimum(wbar - 1.0, 40.0 + 80.0), 0.0, None)
    n_a = np.ceil(ahead / 40.0 - 1e-9).clip(1)
    n_e = np.ceil((ahead + beh) / 40.0 - 1e-9).clip(1)
    np.testing.assert_array_equal(extra[lost], np.maximum(np.maximum(n_a + 2, n_e) - 3, 0))
    np.testing.assert_allclose(behind[lost], p * beh, rtol=1e-12)
    assert (extra[~lost] == 0).all() and (behind[~lost] == 0).all()
    tail = np.maximum(n_e - 1, 0)                  # sec. 13: held at B_max for n_a intervals, then drained
    np.testing.assert_allclose(draining[lost], p * (tail + np.minimum(n_a, tail)), rtol=1e-15)
    assert extra.max() >= 2                        # this buffer does delay recovery


@pytest.mark.parametrize("rr,psi", [(0.5, 20), (0.5, 5), (0.1, 2), (1.0, 20)])
def test_drain_band_holds_the_simulated_tcp(rr, psi):
    """TCP alone over 2 BDP (Delta 40, B_max 80, wmax 256): the cell simulator gives 0.9672 +/-
    0.0015, 0.9631 +/- 0.0010, 0.9567 +/- 0.0010, 0.9693 (``tcpabr simulate --delta 40 --bmax 80
    --rate-ratio RR --psi PSI --wmax 256 --feedback none``, 10 x 2000 s, docs/traces.md sec.
    7.2g).  III-B.4's cycle puts even its conservative bound above it at the first three
    (0.9933, 0.9837, 0.9896); the drained cycle's band contains each, and its prediction is
    closer where the capacity varies (at constant capacity both are about 1 % above: 0.9791
    and 0.9796)."""
    sim = {(0.5, 20): 0.9672, (0.5, 5): 0.9631, (0.1, 2): 0.9567, (1.0, 20): 0.9693}[(rr, psi)]
    r = markov.analyze(_sc(rate_ratio=rr, psi=psi, loss_cycle="drain"))
    assert r.conservative <= sim <= r.optimistic
    assert r.conservative <= r.prediction <= r.optimistic
    paper = markov.analyze(_sc(rate_ratio=rr, psi=psi))
    if rr < 1.0:
        assert abs(r.prediction - sim) < abs(paper.prediction - sim)
    else:
        assert abs(r.prediction - sim) < 0.012 and abs(paper.prediction - sim) < 0.012


def test_drain_is_the_timeout_only_tcps():
    with pytest.raises(ValueError, match="loss_cycle='drain' is invalid with tcp='sack'"):
        _sc(loss_cycle="drain", tcp="sack")
    with pytest.raises(ValueError, match="loss_cycle"):
        _sc(loss_cycle="later")


def test_cli_trace_reports_the_loss_cycle(capsys):
    from pathlib import Path

    import json

    import tcpabr_model.cli as cli

    trace = str(Path(__file__).parent / "data" / "markov3_outage.down")
    argv = ["analyze", "--trace", trace, "--rtt", "0.05", "--bmax", "10", "--feedback", "none"]
    assert cli.main(argv + ["--loss-cycle", "drain", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["loss_cycle"] == "drain" and d["conservative"] <= d["prediction"] <= d["optimistic"]
    assert cli.main(argv + ["--loss-cycle", "drain"]) == 0
    assert "loss_cycle=drain" in capsys.readouterr().out.splitlines()[0]
    assert cli.main(argv) == 0       # a measured link's default: the timer cycle (docs/model.md sec. 15)
    assert "loss_cycle=timer" in capsys.readouterr().out.splitlines()[0]
    assert cli.main(argv + ["--loss-cycle", "paper"]) == 0
    assert "loss_cycle" not in capsys.readouterr().out.splitlines()[0]
