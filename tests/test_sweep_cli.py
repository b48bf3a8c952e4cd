"""``tcpabr sweep``: grid flags, ranges, TOML file, CSV output, errors (exit 2, one line)."""

import json

import numpy as np
import pandas as pd
import pytest

import tcpabr_model.cli as cli
from tcpabr_model.sweep import Grid, run_sweep
from tcpabr_model.sweep.cli import parse_grid_arg, parse_value


@pytest.fixture
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.sweep.cli",))
    return cli.main


def test_parse_values_and_ranges():
    assert [parse_value(v) for v in ("3", "2.5", "true", "False", "null", "none", "[40, 60]", "1e3")] == \
        [3, 2.5, True, False, None, "none", [40, 60], 1000.0]
    key, vals = parse_grid_arg("psi=1,logspace:10:1000:3,linspace:0:1:3")
    assert key == "psi" and vals == pytest.approx([1, 10, 100, 1000, 0, 0.5, 1])
    assert parse_grid_arg("delta=[40,60],[40,80]") == ("delta", [[40, 60], [40, 80]])
    assert parse_grid_arg("psi=logspace:1:200:20")[1] == pytest.approx(list(np.geomspace(1, 200, 20)))


def test_grid_flags_csv_output(main, capsys, tmp_path):
    out = tmp_path / "sub" / "t.csv"
    rc = main(["sweep", "analysis", "--grid", "psi=2,20", "--grid", "feedback=instcap,none",
               "--fixed", "delta=8", "--fixed", "bmax=3", "--fixed", "wmax=16", "--workers", "1",
               "--out", str(out), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "4 points (0 from the cache, 0 failed)" in text and f"wrote {out}" in text
    df = pd.read_csv(out)
    ref = run_sweep("analysis", Grid({"psi": [2, 20], "feedback": ["instcap", "none"]},
                                     fixed={"delta": 8, "bmax": 3, "wmax": 16}), workers=1)
    assert df.columns.tolist() == ref.columns.tolist()
    assert np.allclose(df.optimistic, ref.optimistic, rtol=1e-14, atol=0)
    assert df.seed.tolist() == ref.seed.tolist()


def test_toml_file_json_and_cache(main, capsys, tmp_path):
    f = tmp_path / "g.toml"
    f.write_text('[fixed]\ns = 0.03\n[grid]\ndelta = [0.2, 0.24]\nk = [8, 12]\n')
    args = ["sweep", "effcap_design", "--file", str(f), "--fixed", "k=8", "--cache", str(tmp_path / "c"),
            "--json", "--workers", "1"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["method"], doc["points"], doc["cached"], doc["failed"]) == ("effcap_design", 2, 0, 0)
    rows = doc["rows"]
    assert [(r["delta"], r["k"], r["m"], r["n"]) for r in rows] == [(0.2, 8, 7, 49), (0.24, 8, 8, 56)]
    assert not any(r["cached"] for r in rows)
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(r["cached"] for r in doc["rows"]) and doc["cached"] == 2 and doc["seconds_this_run"] == 0


def test_cache_none_means_no_cache_even_with_the_variable(main, capsys, tmp_path, monkeypatch):
    env = tmp_path / "env-cache"
    monkeypatch.setenv("TCPABR_CACHE_DIR", str(env))
    monkeypatch.chdir(tmp_path)
    args = ["sweep", "effcap_design", "--grid", "delta=0.2", "--fixed", "s=0.03", "--fixed", "k=8", "--json",
            "--workers", "1"]
    assert main(args + ["--cache", "none"]) == 0
    assert json.loads(capsys.readouterr().out)["cached"] == 0
    assert not (tmp_path / "none").exists() and not (env.exists() and any(env.iterdir()))
    assert main(args) == 0            # without it the variable's folder is the cache
    capsys.readouterr()
    assert any(env.iterdir())


def test_failed_point_exit_1(main, capsys):
    rc = main(["sweep", "analysis", "--grid", "psi=0.5,2", "--fixed", "delta=8", "--fixed", "bmax=3",
               "--fixed", "wmax=16", "--workers", "1"])
    assert rc == 1
    cap = capsys.readouterr()
    assert "1 failed" in cap.out
    assert "point failed: {'psi': 0.5" in cap.err and "ValueError: psi=0.5 is invalid" in cap.err


@pytest.mark.parametrize("argv, msg", [
    (["analysis", "--grid", "psi"], "--grid 'psi' is invalid"),
    (["analysis", "--grid", "psi=logspace:0:10:3"], "logspace ends must be > 0"),
    (["analysis", "--grid", "psi=linspace:1:x:3"], "START and STOP must be numbers"),
    (["analysis", "--grid", "psi=1", "--grid", "psi=2"], "--grid 'psi' is invalid: given twice"),
    (["analysis"], "give at least one"),
    (["nope", "--fixed", "psi=2"], "method='nope' is invalid"),
    (["no_such_module:f", "--fixed", "psi=2"], "cannot import it"),
    (["analysis", "--fixed", "psi=2", "--out", "t.xlsx"], "--out='t.xlsx' is invalid"),
    (["analysis", "--file", "missing.toml"], "grid file='missing.toml' is invalid"),
    (["analysis", "--fixed", "psi=2", "--seed", "-1"], "seed=-1 is invalid"),
    (["analysis", "--fixed", "psi=2", "--workers", "0"], "--workers=0 is invalid"),
    (["analysis", "--fixed", "psi=2", "--dask", "local:x"], "--dask 'local:x' is invalid"),
    (["analysis", "--fixed", "seed=2"], "key 'seed' is invalid"),
    (["analysis", "--fixed", "psi="], "--fixed 'psi=' is invalid"),
    (["analysis", "--fixed", "psi=2", "--out", "/proc/no/t.csv"], "--out='/proc/no' is invalid: cannot create the folder"),
    # issue 24: checked once, before the first point, not at every point
    (["analysis", "--grid", "psi=2,3", "--fixed", "delta=8", "--option", "bogus=1"],
     "--option bogus=1 is invalid: the analysis method takes solver, tol"),
    (["effective_capacity", "--grid", "delta=1,2", "--option", "replications=2"],
     "--option replications=2 is invalid: the effective_capacity method takes no option"),
    # and their values (a CLI audit, Nov 29: each was an error row at every point, or a TypeError)
    (["analysis", "--grid", "psi=2", "--option", "solver=foo"], "--option solver='foo' is invalid: must be one of"),
    (["analysis", "--grid", "psi=2", "--option", "tol=abc"], "--option tol='abc' is invalid: must be a real number in (0.0, 1.0]"),
    (["analysis", "--grid", "psi=2", "--option", "tol=-1"], "--option tol=-1 is invalid: must be in (0.0, 1.0]"),
    (["simulation", "--grid", "psi=2", "--option", "replications=0"],
     "--option replications=0 is invalid: must be an integer in [1, 100000]"),
    (["simulation", "--grid", "psi=2", "--option", "level=2"], "--option level=2 is invalid: must be in (0.0, 1.0)"),
    (["analysis", "--grid", "psi=linspace:1:2:20000", "--fixed", "delta=8", "--fixed", "bmax=3"],
     "--yes is needed: 20,000 points, about"),
])
def test_bad_input_exit_2_one_line(main, capsys, argv, msg):
    assert main(["sweep", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1


def test_yaml_list_file_is_one_line(main, capsys, tmp_path):
    f = tmp_path / "g.yaml"
    f.write_text("- psi: 2\n")
    assert main(["sweep", "analysis", "--file", str(f)]) == 2
    err = capsys.readouterr().err
    assert "must hold a [grid] and/or [fixed] table" in err and len(err.strip().splitlines()) == 1


def test_parquet_without_pyarrow_is_one_line(main, capsys, monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    rc = main(["sweep", "effcap_design", "--fixed", "delta=0.2", "--fixed", "s=0.03",
               "--out", str(tmp_path / "t.parquet")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "Parquet needs pyarrow" in err and len(err.strip().splitlines()) == 1


def test_compact_table_and_columns(main, capsys, tmp_path):
    out = tmp_path / "t.csv"
    argv = ["sweep", "analysis", "--grid", "psi=2,20", "--fixed", "delta=8", "--fixed", "bmax=3", "--fixed",
            "wmax=16", "--workers", "1", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "fixed: delta=8, bmax=3, wmax=16"
    assert lines[1].split() == ["psi", "optimistic", "conservative"]
    assert len(pd.read_csv(out).columns) > 15  # the file keeps every column
    assert main(argv + ["--columns", "n_states,loss_probability"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split() == ["psi", "optimistic", "conservative", "n_states",
                                                               "loss_probability"]
    assert main(argv + ["--columns", "nosuch"]) == 2
    assert "--columns 'nosuch' is invalid" in capsys.readouterr().err


def test_compact_table_shows_estimates_with_ci():
    from tcpabr_model.sweep.cli import compact_table

    df = pd.DataFrame({"psi": [1.0, 10.0], "efficiency": [0.55184, 0.9], "efficiency_hw": [0.00912, float("nan")],
                       "fairness": [1.0, 1.0], "fairness_hw": [0.0, 0.0], "status": ["ok", "ok"], "error": ["", ""],
                       "seed": [1, 2], "seconds": [1.0, 2.0], "cached": [False, False]})
    text = compact_table(df, Grid({"psi": [1.0, 10.0]}), "simulation")
    assert text.splitlines()[1].split() == ["1", "0.5518", "+/-", "0.0091", "1.0000", "+/-", "0.0000"]
    assert "0.9000" in text.splitlines()[2] and "+/-" not in text.splitlines()[2].split("1.0000")[0][10:]


def test_json_full_precision_same_layout_as_other_commands(main, capsys):
    from tcpabr_model.cli import dumps

    assert dumps({"b": 0.1 + 0.2, "a": float("nan"), "c": np.float64(1 / 3), "d": (1, 2)}) == (
        '{\n  "a": null,\n  "b": 0.30000000000000004,\n  "c": 0.3333333333333333,\n  "d": [\n    1,\n    2\n  ]\n}')
    assert main(["sweep", "effcap_design", "--grid", "delta=0.2", "--fixed", "s=0.07", "--workers", "1",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"][0]["delta"] == 0.2 and isinstance(doc["rows"][0]["seed"], int)


# ---- issue 24: the size and time of a sweep, before it starts ------------------------------
EC = ["sweep", "effective_capacity", "--grid", "delta=1,2,3", "--fixed", "p01=0.1", "--fixed", "p10=0.2",
      "--fixed", "c0=1", "--fixed", "c1=0.5", "--no-progress", "--workers", "1"]


def test_above_the_threshold_needs_yes(main, capsys, monkeypatch):
    from tcpabr_model.sweep import _size

    monkeypatch.setattr(_size, "CONFIRM_POINTS", 2)
    assert main(EC) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("tcpabr sweep: error: --yes is needed: 3 points, about 0 s on 1 worker is above the "
                           "confirmation threshold (10,000 points or 1 h estimated); add --yes to run it, or make "
                           "the grid smaller")
    assert main([*EC, "--yes"]) == 0
    cap = capsys.readouterr()
    assert cap.err == "tcpabr sweep: 3 points, about 0 s on 1 worker (--yes)\n" and "3 points" in cap.out


def test_the_time_estimate_counts_too(main, capsys, monkeypatch):
    from tcpabr_model.sweep import _size

    monkeypatch.setattr(_size, "CONFIRM_SECONDS", 1e-3)   # 3 closed-form points: 0.03 s estimated
    assert main(EC) == 2 and "--yes is needed: 3 points" in capsys.readouterr().err


@pytest.mark.parametrize("answer, rc", [("y\n", 0), ("\n", 1), ("no\n", 1)])
def test_a_terminal_is_asked(main, capsys, monkeypatch, answer, rc):
    import io
    import sys

    from tcpabr_model.sweep import _size

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(_size, "CONFIRM_POINTS", 2)
    monkeypatch.setattr(sys, "stdin", Tty(answer))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert main(EC) == rc
    err = capsys.readouterr().err
    assert "3 points, about 0 s on 1 worker; above 10,000 points or 1 h. Run it? [y/N]" in err
    assert ("not started" in err) == (rc == 1)


def test_estimates_of_the_built_in_methods():
    from tcpabr_model.sweep import _size

    g = Grid({"psi": [1.0, 20.0]}, fixed={"delta": 8, "bmax": 3})
    sim = _size.estimate_seconds("simulation", g.points, {"replications": 2})
    assert sim > 0 and _size.estimate_seconds("simulation", g.points, {"replications": 4}) == pytest.approx(2 * sim)
    assert _size.estimate_seconds("analysis", g.points, {}) > 0
    assert _size.estimate_seconds("network", [{"preset": "x"}], {}) is None
    assert _size.estimate_seconds("effcap_design", [{}] * 5, {}) == pytest.approx(5 * _size.CLOSED_FORM_SECONDS)


def test_run_sweep_checks_options_before_any_point():
    with pytest.raises(ValueError, match="method_options bogus=1 is invalid: the analysis method takes solver, tol"):
        run_sweep("analysis", {"psi": [2.0, 3.0], "delta": [8]}, method_options={"bogus": 1}, workers=1)
    with pytest.raises(ValueError, match=r"method_options tol=0 is invalid: must be in \(0.0, 1.0\]"):
        run_sweep("analysis", {"psi": [2.0, 3.0], "delta": [8]}, method_options={"tol": 0}, workers=1)
    with pytest.raises(ValueError, match="method_options ci_method='x' is invalid"):
        run_sweep("simulation", {"psi": [2.0]}, method_options={"ci_method": "x"}, workers=1)
