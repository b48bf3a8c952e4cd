"""``tcpabr simulate``: JSON keys, flags, errors (exit status 2, one line)."""

import json

import pytest

import tcpabr_model.cli as cli


@pytest.fixture
def main(monkeypatch):
    # only our subcommand, so the test does not depend on the other subpackages
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.sim.cli",))
    return cli.main


def test_simulate_json(main, capsys):
    rc = main(["simulate", "--feedback", "effcap", "--delta", "40", "--bmax", "10", "--psi", "1",
               "--seed", "1", "--m", "7", "--n", "49", "--duration", "60", "--replications", "3", "--json"])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["efficiency"]) >= {"mean", "half_width", "low", "high", "n"}
    assert d["efficiency"]["n"] == 3
    assert d["speed"]["cells_per_second"] > 0
    assert d["scenario"]["m"] == [7] and d["scenario"]["n"] == [49]


def test_simulate_text_two_sessions(main, capsys):
    rc = main(["simulate", "--feedback", "effcap", "--delta", "48", "72", "--bmax", "18", "--psi", "1",
               "--k", "12", "--duration", "40", "--replications", "2"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "Jain fairness" in out and "connection 1" in out


@pytest.mark.parametrize("argv, msg", [
    (["--psi", "-1"], "psi=-1.0 is invalid"),
    (["--feedback", "instcap", "--m", "3"], "--m/--n/--k apply to --feedback effcap only"),
    (["--bmax", "0"], "bmax=0 is invalid"),
    (["--capacity-mode", "embedded", "--psi", "0.5"], "embedded mode needs psi"),
])
def test_simulate_bad_inputs_exit_2(main, capsys, argv, msg):
    assert main(["simulate", "--duration", "5", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1


def test_simulate_trace_file(main, capsys, tmp_path):
    import numpy as np
    path = tmp_path / "new" / "sub" / "trace.npz"   # issue 24: a missing folder is created, like sweep --out
    assert main(["simulate", "--duration", "20", "--replications", "1", "--trace", str(path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["trace_file"] == str(path)
    z = np.load(path)
    assert {"time", "cwnd", "queue", "source_rate"} <= set(z.files)
    assert z["cwnd"].shape[1] == 1
