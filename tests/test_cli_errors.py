"""Every bad input is answered in one line on stderr with exit status 2, never a traceback.

One row per case: the command line, the exit status and a fragment the message must
contain (the user's flag name, the value or the reason).  ``{tmp}`` is a scratch folder
holding the files of :func:`files`.  All rows are refused before any computing starts,
so the table runs in-process in seconds; a few rows also run as real subprocesses.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import subprocess
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from tcpabr_model.cli import main

BASE = ["--p01", "0.1", "--p10", "0.1", "--c0", "1", "--c1", "0.5"]
SW = ["sweep", "analysis", "--grid", "psi=2", "--fixed", "delta=8", "--fixed", "bmax=3", "--no-progress"]

CASES = [
    # effcap ------------------------------------------------------------------------
    (["effcap", "--delta", "1"], 2, "--p01, --p10, --c0, --c1 is invalid: required without --matrix"),
    (["effcap", *BASE], 2, "give exactly one of them"),
    (["effcap", *BASE, "--delta", "1", "--rate", "0.6"], 2, "give exactly one of them"),
    (["effcap", *BASE, "--epsilon", "1e-6"], 2, "--epsilon/--bmax is invalid: give both"),
    (["effcap", "--p01", "1.5", "--p10", "0.1", "--c0", "1", "--c1", "0.5", "--delta", "1"], 2, "1.5"),
    (["effcap", *BASE, "--delta", "nan"], 2, "nan"),
    (["effcap", *BASE, "--rate", "2"], 2, "--rate=2.0 exceeds the mean capacity 0.75"),
    (["effcap", "--p01", "abc"], 2, "argument --p01: invalid float value: 'abc'"),
    (["effcap", "--matrix", "{tmp}/P.txt", "--delta", "1"], 2, "--capacities is missing: required with --matrix"),
    (["effcap", "--matrix", "{tmp}/missing.csv", "--capacities", "{tmp}/c.txt", "--delta", "1"], 2,
     "--matrix '{tmp}/missing.csv' is invalid: no such file"),
    (["effcap", "--matrix", "{tmp}/ragged.csv", "--capacities", "{tmp}/c.txt", "--delta", "1"], 2,
     "--matrix '{tmp}/ragged.csv' is invalid: line 3 has 1 values, line 1 has 2"),
    (["effcap", "--matrix", "{tmp}/text.csv", "--capacities", "{tmp}/c.txt", "--delta", "1"], 2,
     "line 2: 'x' is not a number"),
    (["effcap", "--matrix", "{tmp}", "--capacities", "{tmp}/c.txt", "--delta", "1"], 2, "it is a folder"),
    (["effcap", "--matrix", "{tmp}/P.txt", "--capacities", "{tmp}/P.txt", "--delta", "1"], 2,
     "--capacities '{tmp}/P.txt' is invalid: must hold 2 values"),
    (["effcap", "--matrix", "{tmp}/c.txt", "--capacities", "{tmp}/c.txt", "--delta", "1"], 2,
     "must hold a square matrix"),
    (["effcap", "--matrix", "{tmp}/empty.txt", "--capacities", "{tmp}/c.txt", "--delta", "1"], 2,
     "the file holds no numbers"),
    (["effcap", "--matrix", "{tmp}/obj.npy", "--capacities", "{tmp}/c.txt", "--delta", "1"], 2,
     "not a readable .npy array"),
    # formula -----------------------------------------------------------------------
    (["formula"], 2, "the following arguments are required: NAME"),
    (["formula", "bogus"], 2, "invalid choice: 'bogus'"),
    (["formula", "window", "--rtt", "0.03"], 2, "--cwnd-avg is missing: required for 'formula window'"),
    (["formula", "window", "--cwnd-avg", "-5", "--rtt", "0.03"], 2, "--cwnd-avg=-5.0 is invalid: must be finite and >= 0"),
    (["formula", "window", "--cwnd-avg", "1e308", "--rtt", "1e-10"], 2, "the throughput overflows a float"),
    (["formula", "atm", "--mss", "0"], 2, "--mss=0 is invalid: must be an integer >= 1"),
    (["formula", "atm", "--mss", "99999999"], 2, "--mss=99999999 is invalid: must be in [1, 65487] bytes"),
    (["formula", "atm", "--mss", "1.5"], 2, "argument --mss: '1.5' is invalid: must be an integer >= 1"),
    # a flag not given is "missing", and parameters inside a message are the flags a user types (a CLI audit, Nov 29)
    (["analyze", "--feedback", "constant"], 2, "--source-rate is missing: --feedback constant needs a source_rate"),
    (["analyze", "--duplicates", "go-back-n"], 2, "is invalid with --loss-cycle paper: it is derived for the timer "
                                                  "cycle's credits (give --loss-cycle timer or --duplicates none)"),
    (["analyze", "--silence", "patterns"], 2, "(give --silence epochs)"),
    # an integer flag's text names the range the command checks (a CLI audit, Nov 29: "invalid int value" alone)
    (["analyze", "--bmax", "nan"], 2, "argument --bmax: 'nan' is invalid: must be an integer in [1, 100000]"),
    (["analyze", "--max-states", "1e6"], 2, "argument --max-states: '1e6' is invalid: must be an integer in [1, "
                                            "1000000000]"),
    (["analyze", "--jackknife", "2.5"], 2, "argument --jackknife: '2.5' is invalid: must be an integer in [2, 50]"),
    (["simulate", "--seed", "nan"], 2, "argument --seed: 'nan' is invalid: must be an integer >= 0"),
    (["simulate", "--replications", "x"], 2, "argument --replications: 'x' is invalid: must be an integer in [1, "
                                             "100000]"),
    (["formula", "fairness"], 2, "values=[] is invalid: give the throughputs"),
    (["formula", "fairness", "1", "-1"], 2, "values=[1.0, -1.0] is invalid"),
    (["formula", "effcap-design", "--rtt", "1e300", "--s", "1e-300"], 2,
     "--rtt/--s=inf is invalid: the round trip must span at most 1e+12 measurement intervals"),
    (["formula", "effcap-design", "--rtt", "-1", "--s", "30"], 2, "--rtt=-1.0 is invalid: must be > 0"),
    (["formula", "effcap-design", "--rtt", "200", "--s", "30", "--k", "1"], 2, "--k=1 is invalid"),
    (["formula", "qos-delta", "--epsilon", "2", "--bmax", "10"], 2, "--epsilon=2.0 is invalid"),
    (["formula", "fifo-share", "--mu", "10", "1", "2", "--bogus"], 2, "unrecognized arguments: --bogus"),
    (["formula", "fifo-share", "--mu", "-1", "1", "2"], 2, "-1"),
    (["formula", "cwnd-avg", "--cwnd-max", "64", "--mss", "1", "--acks-per-increment", "0"], 2,
     "--acks-per-increment=0.0 is invalid: must be >= 1"),
    # sweep -------------------------------------------------------------------------
    (["sweep", "analysis"], 2, "--grid/--fixed/--file is invalid: give at least one"),
    (["sweep", "analysis", "--grid", "psi=logspace:1:200:1000000000"], 2,
     "1,000,000,000 points (about 953.7 GiB at ~1 KiB per point) exceed the limit of 1,000,000 points"),
    (["sweep", "analysis", "--grid", "psi=linspace:1:2:2000", "--grid", "bmax=linspace:1:9:1000"], 2,
     "--grid psi (2000 values) x bmax (1000 values) is invalid: 2,000,000 points"),
    (["sweep", "analysis", "--grid", "psi"], 2, "must be KEY=V1,V2,..."),
    (["sweep", "analysis", "--grid", "psi=logspace:0:10:5"], 2, "logspace ends must be > 0"),
    (["sweep", "analysis", "--grid", "psi=linspace:1:2"], 2, "a range is linspace:START:STOP:COUNT"),
    (["sweep", "analysis", "--grid", "psi=1", "--grid", "psi=2"], 2, "--grid 'psi' is invalid: given twice"),
    (["sweep", "analysis", "--grid", "psi=[1,2"], 2, "not valid JSON"),
    (["sweep", "analysis", "--grid", "status=1"], 2, "reserved sweep columns"),
    (["sweep", "nosuch.module:func", "--grid", "psi=1"], 2, "METHOD='nosuch.module:func' is invalid: cannot import"),
    (["sweep", "analysis", "--option", "replications"], 2, "--option 'replications' is invalid: must be KEY=VALUE"),
    ([*SW, "--workers", "0"], 2, "--workers=0 is invalid: must be >= 1"),
    ([*SW, "--workers", "3", "--dask", "local:1"], 2, "--workers=3 is invalid with --dask"),
    ([*SW, "--seed", "-1"], 2, "--seed=-1 is invalid"),
    ([*SW, "--out", "{tmp}/t.txt"], 2, "--out='{tmp}/t.txt' is invalid: must end in .csv or .parquet"),
    ([*SW, "--out", "{tmp}/folder.csv"], 2, "--out='{tmp}/folder.csv' is invalid: it is a folder, not a file"),
    ([*SW, "--out", "{tmp}/P.txt/t.csv"], 2, "--out='{tmp}/P.txt' is invalid: it is an existing file, not a folder"),
    ([*SW, "--out", "/proc/tcpabr/t.csv"], 2, "--out='/proc/tcpabr' is invalid: cannot create the folder"),
    ([*SW, "--cache", "{tmp}/P.txt"], 2, "--cache='{tmp}/P.txt' is invalid: it is an existing file, not a folder"),
    ([*SW, "--file", "{tmp}/missing.toml"], 2, "grid file='{tmp}/missing.toml' is invalid: No such file"),
    ([*SW, "--file", "{tmp}/P.txt"], 2, "must end in .toml, .yaml or .yml"),
    # reproduce ---------------------------------------------------------------------
    (["reproduce", "--out", "{tmp}/P.txt"], 2, "--out='{tmp}/P.txt' is invalid: it is an existing file, not a folder"),
    (["reproduce", "--out", "/proc/tcpabr-out"], 2, "--out='/proc/tcpabr-out' is invalid: cannot create the folder"),
    (["reproduce", "--figures", "7"], 2, "[7] not among the reproduced figures 8..22"),
    (["reproduce", "--figures", "a,b"], 2, "must be comma-separated integers in 8..22"),
    (["reproduce", "--figures", ","], 2, "no figure number given"),
    (["reproduce", "--seed", "-1", "--out", "{tmp}/r"], 2, "--seed=-1 is invalid"),
    (["reproduce", "--workers", "0", "--out", "{tmp}/r"], 2, "--workers=0 is invalid"),
    (["reproduce", "--workers", "2", "--dask", "local:1"], 2, "--workers=2 is invalid with --dask"),
    (["reproduce", "--size", "huge"], 2, "invalid choice: 'huge'"),
    (["reproduce", "--cache", "{tmp}/P.txt", "--out", "{tmp}/r"], 2, "--cache='{tmp}/P.txt' is invalid"),
    # plot and validate ---------------------------------------------------------------
    (["plot", "{tmp}/missing.csv", "--x", "psi", "--y", "efficiency"], 2,
     "TABLE '{tmp}/missing.csv' is invalid: no such file"),
    (["plot", "{tmp}/P.txt", "--x", "psi", "--y", "efficiency"], 2, "must end in .csv or .parquet"),
    (["plot", "{tmp}/t.csv", "--x", "psi", "--y", "eff"], 2, "--y='eff' is invalid: not a column of"),
    (["plot", "{tmp}/t.csv", "--x", "psi", "--y", "efficiency", "--logx", "yes"], 2,
     "--logx=yes is invalid: psi has values <= 0"),
    (["plot", "{tmp}/t.csv", "--x", "psi", "--y", "efficiency", "--out", "{tmp}/f.gif"], 2,
     "must end in .png or .pdf or .svg"),
    (["plot", "{tmp}/t.csv", "--x", "psi"], 2, "the following arguments are required: --y"),
    (["validate", "-k", "nosuch"], 2, "--only='nosuch' is invalid: no check name contains it"),
    (["validate", "--quick", "--full"], 2, "argument --full: not allowed with argument --quick"),
    # issue 24: the user's flag, the value given and the range, never the code's name --------
    (["formula", "fairness", "0", "0"], 2, "values=[0.0, 0.0] is invalid: the fairness index is undefined"),
    (["effcap", "--p01", "0.1", "--p10", "0.1", "--c0", "nan", "--c1", "0.5", "--delta", "1"], 2,
     "--c0=nan is invalid: must be a finite number >= 0.0"),
    (["effcap", "--p01", "0.1", "--p10", "0.1", "--c0", "1", "--c1", "-0.5", "--delta", "1"], 2,
     "--c1=-0.5 is invalid: must be >= 0.0"),
    (["effcap", "--matrix", "{tmp}/P.txt", "--capacities", "{tmp}/cneg.txt", "--delta", "1"], 2,
     "--capacities=[1.0, -0.5] is invalid: capacities must be finite and >= 0"),
    (["simulate", "--feedback", "constant", "--source-rate", "0"], 2, "--source-rate=0.0 is invalid: must be in (0.0, 1.0]"),
    (["simulate", "--rtt", "-1"], 2, "--rtt=-1.0 is invalid: must be in (0, 100] seconds"),
    (["simulate", "--rtt", "1e9"], 2, "--rtt=1000000000.0 is invalid: must be in (0, 100] seconds"),
    (["simulate", "--rtt", "0.1", "nan"], 2, "--rtt=nan (entry 1) is invalid"),
    (["simulate", "--delta", "40", "--rtt", "0.5"], 2, "--rtt and --delta are exclusive"),
    (["simulate", "--target-halfwidth", "0"], 2, "--target-halfwidth=0.0 is invalid: must be > 0.0"),
    (["simulate", "--feedback-delay", "-0.1"], 2, "--feedback-delay=-0.1 (entry 0) is invalid: must be in [0.0,"),
    (["trace", "fit", "{data}/markov3_outage.down", "--rtt", "-1"], 2, "--rtt=-1.0 is invalid: must be > 0.0"),
    (["trace", "fit", "{data}/markov3_outage.down", "--rtt", "1e300"], 2,
     "--rtt/--epoch=1e+301 is invalid: the round trip must span at most 1e+12 measurement intervals"),
    (["trace", "fit", "{data}/markov3_outage.down", "--states", "1000"], 2, "--states=1000 is invalid"),
    (["trace", "fit", "{data}/markov3_outage.down", "--epoch", "0"], 2, "--epoch=0.0 is invalid: must be > 0.0"),
    (["trace", "fit", "{data}/markov3_outage.down", "--epoch", "1e-9"], 2,
     "--epoch=1e-09 is invalid: must be >= 0.001 s, the trace's resolution"),
    (["trace", "fit", "{data}/markov3_outage.down", "--regimes", "0"], 2, "--regimes=0 is invalid: must be an integer in [1, 16]"),
    (["trace", "fit", "{data}/markov3_outage.down", "--regimes", "2", "--states", "3"], 2,
     "--states=3 is invalid with --regimes 2: must be a multiple of it"),
    (["trace", "fit", "{data}/markov3_outage.down", "--regimes", "2", "--regime-window", "-1"], 2,
     "--regime-window=-1.0 is invalid: must be > 0.0"),
    (["trace", "fit", "{data}/markov3_outage.down", "--regimes", "2", "--regime-window", "1e6"], 2,
     "--regime-window=1000000.0 is invalid: must be at most half the trace"),
    (["analyze", "--regimes", "2"], 2, "--regimes is used only with --trace"),
    (["analyze", "--rtt", "0.5"], 2, "--rtt is used only with --trace"),
    (["analyze", "--patterns", "4", "--states", "2"], 2, "--patterns, --states are used only with --trace"),
    (["analyze", "--trace", "{data}/markov3_outage.down", "--rtt", "0.05", "--delta", "40"], 2,
     "--delta=40.0 is invalid with --trace"),
    (["analyze", "--trace", "{data}/markov3_outage.down", "--rtt", "-1"], 2, "--rtt=-1.0 is invalid"),
    (["analyze", "--feedback", "constant", "--source-rate", "0"], 2, "--source-rate=0.0 is invalid"),
    (["analyze", "--trace", "{data}/markov3_outage.down", "--rtt", "0.05", "--switch-time", "uniform"], 2,
     "--switch-time='uniform' is invalid with --trace"),
    (["analyze", "--trace", "{data}/markov3_outage.down", "--rtt", "0.05", "--feedback", "none", "--ack-clock",
      "spread"], 2, "--ack-clock='spread' is invalid with --trace"),
    (["analyze", "--feedback", "none", "--loss-cycle", "timer", "--round-trip", "transmission"], 2,
     "--round-trip='transmission' is invalid with --loss-cycle timer"),
    (["analyze", "--feedback", "instcap", "--ack-clock", "spread"], 2,
     "--ack-clock='spread' is invalid with --feedback instcap"),
    (["analyze", "--switch-time", "middle"], 2, "invalid choice: 'middle'"),
    (["analyze", "--ca-increment", "coin"], 2, "invalid choice: 'coin'"),
    # the top level -----------------------------------------------------------------
    ([], 2, "the following arguments are required: COMMAND"),
    (["nosuch"], 2, "invalid choice: 'nosuch'"),
]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    (d / "P.txt").write_text("0.9 0.1\n0.2 0.8\n")
    (d / "c.txt").write_text("1\n0.5\n")
    (d / "cneg.txt").write_text("1\n-0.5\n")
    (d / "ragged.csv").write_text("0.9,0.1\n# a comment line\n0.2\n")
    (d / "text.csv").write_text("0.9,0.1\n0.2,x\n")
    (d / "empty.txt").write_text("# nothing\n")
    np.save(d / "obj.npy", np.array([{"a": 1}], dtype=object))
    (d / "folder.csv").mkdir()
    (d / "t.csv").write_text("psi,efficiency\n0,0.5\n10,0.7\n")
    return str(d)


DATA = str(Path(__file__).parent / "data")
#: what an error may start with besides a flag: the names of positional arguments, in capitals
#: or as the help shows them (``values`` of ``tcpabr formula``)
_POSITIONAL = {"values"}
_INTERNAL = re.compile(r"^([A-Za-z_]\w*)(\[\d+\])?(=| is invalid)")


def _fill(items, tmp):
    return [x.replace("{tmp}", tmp).replace("{data}", DATA) for x in items]


@pytest.mark.parametrize("argv, code, fragment", CASES, ids=[" ".join(c[0])[:60] or "(none)" for c in CASES])
def test_bad_input_one_line(argv, code, fragment, tmp, capsys):
    argv = _fill(argv, tmp)
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse usage errors
        rc = exc.code
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert rc == code, err
    assert fragment.replace("{tmp}", tmp).replace("{data}", DATA) in err
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith("tcpabr")
    # never the code's name for a parameter (``initial_rate=``, ``x is invalid``) where a flag is meant
    text = err.split(": error: ", 1)[-1]
    m = _INTERNAL.match(text)
    assert m is None or m.group(1) in _POSITIONAL or m.group(1).isupper(), text


@pytest.mark.parametrize("argv, fragment", [
    (["formula", "effcap-design", "--rtt", "1e300", "--s", "1e-300"], "--rtt/--s=inf is invalid"),
    (["sweep", "analysis", "--grid", "psi=logspace:1:200:1000000000"], "exceed the limit"),
    (["reproduce", "--out", "{tmp}/P.txt"], "it is an existing file"),
])
def test_bad_input_subprocess(argv, fragment, tmp):
    """The real console entry: one line, exit 2, and quickly (no model is imported)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, "-m", "tcpabr_model", *_fill(argv, tmp)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and fragment.replace("{tmp}", tmp) in p.stderr


def test_values_after_options_join_the_positional_list(capsys):
    assert main(["formula", "fifo-share", "--mu", "10", "1", "2", "3"]) == 0
    a = capsys.readouterr().out
    assert main(["formula", "fifo-share", "1", "2", "3", "--mu", "10"]) == 0
    assert capsys.readouterr().out == a == "FIFO shares: 1.66667, 3.33333, 5\n"


# ---- booleans are not numbers, in every validated dataclass ---------------------------
def _dataclasses_with_numeric_defaults():
    mods = ["tcpabr_model.markov.scenario", "tcpabr_model.sim.scenario", "tcpabr_model.sim.feedback",
            "tcpabr_model.sim.network", "tcpabr_model.sim.presets.abr_backbone", "tcpabr_model.sim.switch.erica",
            "tcpabr_model.sim.abr.source", "tcpabr_model.closed_forms.calibration", "tcpabr_model.validity"]
    out = []
    for name in mods:
        mod = importlib.import_module(name)
        for obj in vars(mod).values():
            if not (isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == name
                    and hasattr(obj, "__post_init__")):
                continue
            fields = dataclasses.fields(obj)
            if any(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING for f in fields):
                continue  # needs arguments we cannot invent generically
            for f in fields:
                if f.type in ("int", "float", int, float) and not isinstance(f.default, bool):
                    out.append(pytest.param(obj, f.name, id=f"{obj.__name__}.{f.name}"))
    return out


@pytest.mark.parametrize("cls, field", _dataclasses_with_numeric_defaults())
@pytest.mark.parametrize("flag", [True, False, np.True_])
def test_dataclasses_refuse_booleans(cls, field, flag):
    with pytest.raises(ValueError, match=field):
        cls(**{field: flag})


def test_markov_scenario_bmax_true_is_refused():
    from tcpabr_model.markov import Scenario

    with pytest.raises(ValueError, match=r"bmax=True is invalid: must be an integer in \[1, 100000\], not a boolean"):
        Scenario(bmax=True)


@pytest.mark.parametrize("argv", [["--workers", "0"], ["--seed", "-5"]])
def test_refused_reproduce_makes_no_folder(argv, tmp, capsys):
    """A refused ``tcpabr reproduce`` leaves nothing behind (a CLI audit, Nov 29: it made ``--out``
    before checking ``--seed`` and ``--workers``)."""
    out = Path(tmp) / "never"
    assert main(["reproduce", *argv, "--out", str(out)]) == 2
    assert "is invalid" in capsys.readouterr().err
    assert not out.exists()
