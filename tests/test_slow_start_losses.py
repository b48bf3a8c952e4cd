"""analytics/slow_start_losses.py: the what-if split of loss entries, the overflow classifier on a
made trace, and the script's quick run (docs/validity.md, "Slow-start losses at psi 10-20")."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from _scripts import load_script
from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov.skeleton import skeleton_for


def _ssl():
    return load_script("analytics/slow_start_losses.py", "slow_start_losses")


SC = Scenario(delta=40.0, bmax=10, psi=20.0, rate_ratio=0.5, wmax=128, feedback="none", loss_cycle="timer")


def test_fail_last_round_keeps_each_states_loss_mass_and_moves_codes_to_half():
    ssl = _ssl()
    Q = SC.rate_matrix
    sk = skeleton_for(SC).with_slow_start_loss(Q)
    assert ssl.fail_last_round(sk, Q, 0.0) is sk
    sk2 = ssl.fail_last_round(sk, Q, 0.25)
    n = sk.n_states
    rows = np.repeat(np.arange(n), np.diff(sk.ls_ptr))
    rows2 = np.repeat(np.arange(n), np.diff(sk2.ls_ptr))
    np.testing.assert_allclose(np.bincount(rows2, sk2.ls_prob, minlength=n),
                               np.bincount(rows, sk.ls_prob, minlength=n), rtol=0, atol=1e-14)
    # one state's entries by hand: mass q of each code m >= 4 moves to floor(m / 2)
    s = int(np.argmax(np.diff(sk.ls_ptr)))
    want: dict[int, float] = {}
    for m, p in zip(sk.ls_m[sk.ls_ptr[s]:sk.ls_ptr[s + 1]], sk.ls_prob[sk.ls_ptr[s]:sk.ls_ptr[s + 1]]):
        m = int(m)
        if m >= 4:
            want[m] = want.get(m, 0.0) + 0.75 * p
            want[max(2, m // 2)] = want.get(max(2, m // 2), 0.0) + 0.25 * p
        else:
            want[m] = want.get(m, 0.0) + p
    got = dict(zip(sk2.ls_m[sk2.ls_ptr[s]:sk2.ls_ptr[s + 1]].tolist(), sk2.ls_prob[sk2.ls_ptr[s]:sk2.ls_ptr[s + 1]]))
    assert set(got) == {m for m, p in want.items() if p > 0}
    for m, p in got.items():
        assert abs(p - want[m]) < 1e-15
    # a failed slow start takes longer: U of the new code plus the time beyond it exceeds U of the old
    sst = sk.slow_start_time if sk.slow_start_time is not None else np.zeros(n)
    assert np.all(sk2.u + sk2.slow_start_time >= sk.u + sst - 1e-12)
    assert np.any(sk2.u + sk2.slow_start_time > sk.u + sst + 0.1)


def test_what_if_lowers_the_prediction_and_is_the_prediction_at_the_chains_own_share():
    ssl = _ssl()
    base = analyze(SC).prediction
    f = ssl.chain_failure_share(SC)
    assert 0.0 <= f < 0.1
    assert ssl.what_if(SC, f) == base
    lower = ssl.what_if(SC, 0.2)
    assert lower < base - 0.01
    assert ssl.what_if(SC, 0.3) < lower
    assert analyze(SC).prediction == base          # the patch is undone


def _trace(q, cap, cw, ss):
    return SimpleNamespace(queue=np.asarray(q, float), capacity=np.asarray(cap), cwnd=np.asarray(cw, float)[:, None],
                           ssthresh=np.asarray(ss, float)[:, None])


def test_overflow_causes_on_a_made_trace():
    ssl = _ssl()
    n = 400
    cw = np.full(n, 30.0)
    ss = np.full(n, 20.0)
    cw[10:] = np.minimum(1 + np.arange(n - 10) * 0.2, 30)   # timeout at 10, ssthresh 20
    cw[300] = 1.0                                           # the next timeout
    cw[301:] = 5.0
    cw[399] = 1.0                                           # a third (ends the second slow start)
    q = np.zeros(n)
    q[60:64] = [1, 2, 7, 10]                                # a 5-packet rise in one unit, then full
    cap = np.zeros(n, dtype=int)
    out = ssl.overflow_causes(_trace(q, cap, cw, ss), 10)
    assert out == dict(slow_starts=2, overflows=1, after_rate_change=0, after_burst=1, neither=0)
    q2 = np.zeros(n)
    q2[60:71] = np.arange(11)                                # one packet per unit: no burst
    cap2 = cap.copy()
    cap2[40:] = 1                                            # a rate change 20 units before
    out2 = ssl.overflow_causes(_trace(q2, cap2, cw, ss), 10)
    assert out2 == dict(slow_starts=2, overflows=1, after_rate_change=1, after_burst=0, neither=0)


def test_quick_run_writes_the_table(tmp_path, capsys):
    ssl = _ssl()
    out = tmp_path / "ssl.csv"
    assert ssl.main(["--quick", "--out", str(out)]) == 0
    df = pd.read_csv(out)
    assert list(df.psi) == [20.0, 1000.0]
    assert {"sim_ss_share", "chain_ss_share", "what_if", "drops_per_timeout", "after_burst"} <= set(df.columns)
    assert (df.what_if <= df.prediction + 1e-12).all()
    assert ssl.main(["--workers", "0"]) == 2
    assert "--workers=0" in capsys.readouterr().err
