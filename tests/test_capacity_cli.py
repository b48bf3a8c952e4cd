"""``tcpabr trace fit``: output, model files, one-line errors with exit status 2."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tcpabr_model.capacity as cap
from tcpabr_model.cli import main

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[1]


def run(argv, capsys):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_fit_json_and_model_files(tmp_path, capsys):
    for ext in ("json", "toml"):
        path = tmp_path / f"model.{ext}"
        rc, out, err = run(["trace", "fit", DATA / "markov3_outage.down", "--states", "3", "--epoch", "0.1",
                            "--rtt", "0.2", "--out", path, "--json"], capsys)
        assert rc == 0 and err == ""
        d = json.loads(out)
        assert d["states"] == 3 and d["levels"] == [0.0, 200.0, 600.0]
        assert d["effcap_design"] == [{"rtt": 0.2, "M": 2, "N": 14, "N_range": [14, 22]}]
        m = cap.load_model(path)
        assert m.levels.tolist() == d["levels"] and m.transition.tolist() == d["model"]["transition"]
        assert m == cap.fit_trace(DATA / "markov3_outage.down", states=3, epoch=0.1).model


def test_fit_text(capsys):
    rc, out, _ = run(["trace", "fit", DATA / "constant_1000pps.down"], capsys)
    assert rc == 0
    assert "K = 1" in out and "1000.0" in out and "12.000" in out  # 1000 packets/s = 12 Mbit/s


@pytest.mark.parametrize("args, match", [
    (["/nonexistent/trace.down"], "cannot read the trace"),
    ([DATA / "markov3_outage.down", "--states", "0"], "states=0 is invalid"),
    ([DATA / "markov3_outage.down", "--epoch", "0"], "epoch=0.0 is invalid"),
    ([DATA / "markov3_outage.down", "--epoch", "-0.5"], "epoch=-0.5 is invalid"),
    ([DATA / "README.md"], "line 1: .* is invalid: not an integer"),
    ([DATA / "markov3_outage.down", "--out", "x.yaml"], "must end in .json or .toml"),
])
def test_bad_input_one_line_exit_2(args, match, capsys):
    rc, out, err = run(["trace", "fit", *args], capsys)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("tcpabr trace: error: ")
    assert re.search(match, err)


def test_malformed_trace_in_a_subprocess(tmp_path):
    """The real command: one line on stderr, exit 2, no traceback."""
    p = tmp_path / "bad.down"
    p.write_text("1\n5\n3\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "tcpabr_model", "trace", "fit", str(p)], capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (f"tcpabr trace: error: {p}: line 3: 3 is invalid: times must be non-decreasing "
                                "(previous line 2: 5)")
