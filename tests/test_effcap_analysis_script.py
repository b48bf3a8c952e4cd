"""analytics/effcap_analysis.py (docs/model.md sec. 20): its table and figure, and its refusals."""

import pandas as pd

from _scripts import load_script


def test_table_and_figure(tmp_path, capsys):
    mod = load_script("analytics/effcap_analysis.py", "effcap_analysis")
    assert mod.main(["--psi", "2,50", "--effcap", "1:8", "--replications", "2", "--units", "2e4",
                     "--out", str(tmp_path)]) == 0
    df = pd.read_csv(tmp_path / "effcap_vs_psi.csv")
    assert list(df["system"].unique()) == ["TCP alone", "INSTCAP", "EFFCAP M=1 N=8"]
    assert (df.conservative <= df.prediction).all() and (df.prediction <= df.optimistic).all()
    low = df[df.psi == 2].set_index("system")
    # at psi 2 the long minimum holds the source at the low rate: about 2/3, INSTCAP far below
    assert low.loc["EFFCAP M=1 N=8", "prediction"] > low.loc["INSTCAP", "prediction"] + 0.2
    assert df["sim"].notna().all() and (tmp_path / "effcap_vs_psi.png").stat().st_size > 10_000
    assert "EFFCAP M=1 N=8" in capsys.readouterr().out


def test_bad_input_one_line_exit_2(tmp_path, capsys):
    mod = load_script("analytics/effcap_analysis.py", "effcap_analysis")
    for argv, word in ((["--effcap", "1-8"], "--effcap="), (["--psi", "x"], "--psi="),
                       (["--psi", "0.5", "--replications", "0"], "psi"), (["--replications", "-1"], "replications")):
        assert mod.main(argv + ["--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and word in err
