"""analytics/slow_start_losses.py: the what-if, the overflow classifier on a made trace, and the
script's quick run (docs/validity.md, "Slow-start losses at psi 10-20")."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from _scripts import load_script
from tcpabr_model.markov import Scenario, analyze


def _ssl():
    return load_script("analytics/slow_start_losses.py", "slow_start_losses")


SC = Scenario(delta=40.0, bmax=10, psi=20.0, rate_ratio=0.5, wmax=128, feedback="none", loss_cycle="timer")


def test_what_if_lowers_sec15_prediction_and_is_it_at_its_own_share():
    ssl = _ssl()
    with ssl._without_burst():
        base15 = analyze(SC).prediction
    full = analyze(SC).prediction
    assert full < base15 - 0.01                    # sec. 15b fails slow starts sec. 15 passes
    f15 = ssl.chain_failure_share(SC, burst=False)
    f = ssl.chain_failure_share(SC)
    assert 0.0 <= f15 < 0.05 < f < 0.5
    assert ssl.what_if(SC, f15) == base15
    lower = ssl.what_if(SC, 0.2)
    assert lower < base15 - 0.01
    assert ssl.what_if(SC, 0.3) < lower
    assert analyze(SC).prediction == full          # the patches are undone


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
    assert {"sim_ss_share", "chain_ss_share", "chain_ss_share_sec15", "prediction_sec15", "what_if",
            "drops_per_timeout", "after_burst"} <= set(df.columns)
    assert (df.what_if <= df.prediction_sec15 + 1e-12).all() and (df.prediction <= df.prediction_sec15 + 1e-12).all()
    assert ssl.main(["--workers", "0"]) == 2
    assert "--workers=0" in capsys.readouterr().err
