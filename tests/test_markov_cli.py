import json

import pytest

from tcpabr_model.cli import main


def test_analyze_json_keys(capsys):
    assert main(["analyze", "--feedback", "instcap", "--delta", "40", "--bmax", "10", "--psi", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("optimistic", "conservative", "optimistic_eq18", "throughput_optimistic",
                "throughput_conservative", "n_states", "nnz", "residual", "solve_seconds"):
        assert key in out
    assert 0 < out["conservative"] <= out["optimistic"] <= 1


def test_analyze_tcp_alone_text(capsys):
    assert main(["analyze", "--feedback", "none", "--psi", "5"]) == 0
    out = capsys.readouterr().out
    assert "TCP alone" in out and "note:" not in out


@pytest.mark.parametrize("feedback, extra, note", [
    ("instcap", [], "with the rate changed at the epochs (III-B.1)"), ("instcap", ["--switch-time", "uniform"], None),
    ("none", [], "with the ACKs back to back at the previous level's spacing (sec. 3)"),
    ("none", ["--ack-clock", "spread"], None), ("none", ["--switch-time", "uniform"], None)])
def test_analyze_small_psi_note(feedback, extra, note, capsys):
    """Below psi 5 the text names what puts the paper's chain below the simulator there (III-B.1's
    placement of the rate change over INSTCAP, section 3's ACK clock for TCP alone) and the option that
    moves it (docs/model.md secs. 3a and 17); with that option, no note."""
    assert main(["analyze", "--feedback", feedback, "--delta", "20", "--bmax", "5", "--psi", "2", *extra]) == 0
    out = capsys.readouterr().out
    assert ("note:" in out) is (note is not None)
    if note is not None:
        assert f"note: psi=2 < 5 {note}" in out


@pytest.mark.parametrize("argv,word", [
    (["analyze", "--psi", "0.2"], "psi"),
    (["analyze", "--bmax", "0"], "bmax"),
    (["analyze", "--rate-ratio", "2"], "--rate-ratio=2.0 is invalid"),
    (["analyze", "--effcap-m", "2"], "--effcap-m=2 is invalid with --feedback instcap"),
    (["analyze", "--feedback", "bogus"], "invalid choice"),
    (["analyze", "--delta", "abc"], "delta"),
    (["analyze", "--psi", "3", "--switch-phases", "2"], "--switch-phases=2 is used only with --switch-time uniform"),
    (["analyze", "--switch-time", "uniform", "--switch-phases", "0"], "--switch-phases=0 is invalid"),
])
def test_analyze_bad_input_one_line_exit_2(argv, word, capsys):
    with pytest.raises(SystemExit) as exc:
        rc = main(argv)
        raise SystemExit(rc)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err


def test_analyze_switch_phases_and_psi_1(capsys):
    """--switch-phases reaches the scenario (the JSON's and the header's), and psi 1 with
    --switch-time uniform is analysed (it exited 2 before: docs/model.md sec. 17)."""
    base = ["analyze", "--feedback", "none", "--delta", "20", "--bmax", "5", "--wmax", "48", "--psi", "1",
            "--switch-time", "uniform"]
    assert main(base + ["--switch-phases", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["switch_phases"] == 2 and out["mean_capacity"] == pytest.approx(0.75)
    assert main(base) == 0
    assert "switch_time=uniform (4 phases)" in capsys.readouterr().out


def test_analyze_convention_flags_and_no_progress(capsys):
    assert main(["analyze", "--feedback", "none", "--delta", "10", "--bmax", "4", "--wmax", "32",
                 "--ack-clock", "after-service", "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["ack_clock"] == "after-service" and round(out["conservative"], 3) == 0.673
    assert main(["analyze", "--delta", "10", "--bmax", "4", "--wmax", "32", "--psi", "2",
                 "--bmax-excludes-service", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["scenario"]["bmax_counts_service"] is False and out["eq18_above_capacity"] is False
    assert abs(out["optimistic_eq18"] - 0.8435) < 1e-4
    assert main(["analyze", "--delta", "10", "--bmax", "4", "--wmax", "32", "--psi", "2",
                 "--bmax-excludes-service"]) == 0
    assert "bmax=4 (waiting room, the packet in service not counted)" in capsys.readouterr().out
