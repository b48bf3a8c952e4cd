"""analytics/effcap_traces.py (docs/traces.md sec. 7.2u): the analysis of EFFCAP on a fitted link beside
the simulator with the same estimator, and its refusals."""

import pandas as pd

from _scripts import ROOT, load_script

SMALL = str(ROOT / "tests" / "data" / "markov3_outage.down")


def test_small_trace(tmp_path, capsys):
    mod = load_script("analytics/effcap_traces.py", "effcap_traces")
    assert mod.main(["--points", SMALL + ":0:0.1", "--mn", "1:1,1:2", "--replications", "2",
                     "--out", str(tmp_path)]) == 0
    df = pd.read_csv(tmp_path / "effcap_traces.csv")
    assert list(zip(df.m, df.n)) == [(1, 1), (1, 2)]
    assert (df.conservative <= df.prediction).all() and (df.prediction <= df.optimistic).all()
    assert df.modelled.notna().all() and df.replay.notna().all() and (df.states[1] > df.states[0])
    assert "M=1 N=2" in capsys.readouterr().out


def test_bad_input_one_line_exit_2(tmp_path, capsys):
    mod = load_script("analytics/effcap_traces.py", "effcap_traces")
    small = ["--points", SMALL + ":0:0.1"]   # the shared traces may be absent (a clone)
    for argv, word in ((small + ["--mn", "1-2"], "--mn="), (["--points", "x:2:0.1"], "HALF"),
                       (["--points", "nope.down:0:0.1"], "does not exist"),
                       (small + ["--replications", "1"], "replications")):
        assert mod.main(argv + ["--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and word in err
