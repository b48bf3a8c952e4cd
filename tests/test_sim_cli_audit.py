"""Fixes from a CLI audit of ``tcpabr simulate`` (Nov 28): a measurement shorter than the round trip is
refused (it printed nan delays and a CI wider than the efficiency), one replication is not called a 95 %
CI, ``--target-halfwidth`` says whether it was reached, ``--trace`` names the file written, and the
goodput says which bytes."""

from __future__ import annotations

import dataclasses
import json

from tcpabr_model.cli import main


def test_a_measurement_shorter_than_the_round_trip_is_refused(capsys):
    assert main(["simulate", "--duration", "0.01", "--warmup", "0", "--replications", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--duration=0.01 s is invalid: shorter than the round trip (0.2 s)" in err


def test_one_replication_is_not_a_ci_and_the_goodput_names_its_bytes(capsys):
    assert main(["simulate", "--duration", "5", "--warmup", "1", "--replications", "1"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("efficiency "))
    assert "(no CI: n = 1)" in line and "95% CI" not in line
    assert "B/s of TCP payload" in out


def test_the_trace_file_is_named(tmp_path, capsys):
    assert main(["simulate", "--duration", "2", "--warmup", "1", "--replications", "1",
                 "--trace", str(tmp_path / "run.txt")]) == 0
    assert f"trace written to {tmp_path / 'run.txt'}.npz" in capsys.readouterr().out
    assert (tmp_path / "run.txt.npz").is_file()


def test_target_halfwidth_says_whether_it_was_reached(monkeypatch, capsys):
    import tcpabr_model.sim.driver as driver

    real = driver.simulate

    def wide(*a, **k):     # the cap reached with a half-width of 10 %: the run's efficiency widened
        r = real(*a, **k)
        e = r.efficiency
        return dataclasses.replace(r, efficiency=dataclasses.replace(e, half_width=0.1 * e.mean))

    argv = ["simulate", "--duration", "5", "--warmup", "1", "--replications", "2", "--target-halfwidth", "0.01",
            "--json"]
    monkeypatch.setattr(driver, "simulate", wide)
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["target_met"] is False
    assert "--target-halfwidth 0.01 not reached" in cap.err and "relative half-width of 0.1" in cap.err
    monkeypatch.setattr(driver, "simulate", real)
    assert main(argv[:-3] + ["--target-halfwidth", "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target_met"] is True


def test_delta_and_delays_name_the_flag_and_the_real_range(capsys):
    for argv, fragment in ((["--delta", "1e-6"], "--delta=1e-06 is invalid: the round trip it gives in seconds"),
                           (["--rtt", "200"], "--rtt=200.0 is invalid: must be in (0, 100] seconds"),
                           (["--feedback-delay", "1e4"], "--feedback-delay=10000.0 (entry 0) is invalid: must be in "
                                                         "[0.0, 100.0]"),
                           (["--feedback-delay", "-1"], "must be in [0.0, 100.0]")):
        assert main(["simulate", *argv]) == 2
        err = capsys.readouterr().err
        assert fragment in err and err.count("\n") == 1
