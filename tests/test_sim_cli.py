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


def test_tcp_alone_text_counts_packets_not_cells(main, capsys):
    # without ABR the link serves whole IP packets: no cell in the text; the JSON keys stay
    argv = ["simulate", "--feedback", "none", "--duration", "20", "--warmup", "5", "--replications", "2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "cell" not in out and "frame" not in out, out
    loss = next(x for x in out.splitlines() if "loss ratio" in x)
    assert loss.startswith("packet loss ratio ") and ", timeouts " in loss
    occ = next(x for x in out.splitlines() if x.startswith("occupancy"))
    assert occ.count("packets") == 2 and "+/-" in occ
    assert all(x.endswith(" packets)") for x in out.splitlines() if x.startswith("delay "))
    assert out.splitlines()[-1].startswith("speed: ") and out.rstrip().endswith(" packets/s")
    assert main(argv + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {"cell_loss_ratio", "frame_loss_ratio"} <= set(d) and "source_cells" in d["delay"]["occupancy"]
    assert f"{d['frame_loss_ratio']['mean']:.3e}" in loss


def test_atm_text_keeps_cells_and_frames(main, capsys):
    assert main(["simulate", "--feedback", "instcap", "--duration", "20", "--warmup", "5", "--replications", "2"]) == 0
    out = capsys.readouterr().out
    assert any(x.startswith("cell loss ratio ") and ", frame loss ratio " in x for x in out.splitlines())
    occ = next(x for x in out.splitlines() if x.startswith("occupancy"))
    assert occ.count(" frames") == 2 and occ.count(" cells") == 2
    assert all(x.endswith(" frames)") for x in out.splitlines() if x.startswith("delay "))
    assert out.rstrip().endswith(" cells/s")


def test_intervals_below_zero_are_clipped_in_text_and_json(main, capsys):
    # 2 short replications of EFFCAP at psi 1: intervals of delays and occupancies reach below 0
    argv = ["simulate", "--feedback", "effcap", "--psi", "1", "--duration", "40", "--warmup", "5", "--replications",
            "2", "--seed", "3"]
    assert main(argv + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    occ = d["delay"]["occupancy"]["source_frames"]
    assert occ["low"] < 0 and occ["ci_low"] == 0.0 and occ["ci_high"] == occ["high"]
    assert occ["mean"] == pytest.approx((occ["low"] + occ["high"]) / 2)     # mean and half-width unchanged
    mean_src = d["delay"]["source"]["mean"]
    assert mean_src["low"] < 0 and mean_src["ci_low"] == 0.0
    for e in (d["efficiency"], d["efficiency_wire"], d["cell_loss_ratio"], d["frame_loss_ratio"]):
        assert 0.0 <= e["ci_low"] <= e["mean"] <= e["ci_high"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("occupancy"))
    assert (f"{occ['mean']:.4g} +/- {occ['half_width']:.4g} (clipped at 0: 0 to {occ['ci_high']:.4g}) frames"
            in line), line
    src = next(x for x in out.splitlines() if x.startswith("delay source"))
    assert f"mean {1e3 * mean_src['mean']:.4g} +/- " in src
    assert f"(clipped at 0: 0 to {1e3 * mean_src['ci_high']:.4g})" in src


def test_delay_half_widths_print_two_digits_without_an_exponent():
    """A delay's half-width of 160 ms reads ``160``, not ``1.6e+02``; small ones keep two digits."""
    from tcpabr_model.sim.delay import _ms
    from tcpabr_model.stats import Estimate

    assert _ms(Estimate(0.3665, 0.16, 0.2065, 0.5265, 2, 0.95, (0.0, None))) == "366.5 +/- 160"
    assert _ms(Estimate(2.0, 3.4, -1.4, 5.4, 2, 0.95, (0.0, None))) == "2000 +/- 3400 (clipped at 0: 0 to 5400)"
    assert _ms(Estimate(0.02441, 0.0025, 0.02191, 0.02691, 2, 0.95, (0.0, None))) == "24.41 +/- 2.5"
