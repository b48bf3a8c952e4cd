"""``tcpabr effcap`` / ``tcpabr formula`` and ``python -m validation``."""

import argparse
import json
import subprocess
import sys

import numpy as np
import pytest

import tcpabr_model.closed_forms as cf
from tcpabr_model.closed_forms.cli import register
from tcpabr_model.errors import ModelError


def run(argv, capsys):
    """Same dispatch as tcpabr_model.cli.main, restricted to this package's commands."""
    p = argparse.ArgumentParser(prog="tcpabr")
    sub = p.add_subparsers(dest="command", required=True)
    register(sub)
    args = p.parse_args(argv)
    try:
        rc = int(args.func(args) or 0)
    except (ValueError, ModelError) as exc:
        print(f"tcpabr {args.command}: error: {exc}", file=sys.stderr)
        rc = 2
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_effcap_json(capsys):
    rc, out, _ = run("effcap --p01 0.1 --p10 0.1 --c0 1 --c1 0.5 --delta 2 --json".split(), capsys)
    assert rc == 0
    d = json.loads(out)
    assert d["effective_capacity"] == pytest.approx(cf.effective_capacity_two_state(0.1, 0.1, 1, 0.5, 2))
    assert d["effective_capacity_closed_form"] == pytest.approx(d["effective_capacity"], rel=1e-12)
    assert d["mean_capacity"] == pytest.approx(0.75)
    assert d["min_cycle_mean"] == pytest.approx(0.5)


def test_effcap_rate_and_qos(capsys):
    rc, out, _ = run("effcap --p01 0.1 --p10 0.1 --c0 1 --c1 0.5 --rate 0.6 --json".split(), capsys)
    d = json.loads(out)
    assert rc == 0 and d["effective_capacity"] == pytest.approx(0.6, rel=1e-9)
    rc, out, _ = run("effcap --p01 0.1 --p10 0.1 --c0 1 --c1 0.5 --epsilon 1e-6 --bmax 10 --json".split(), capsys)
    assert json.loads(out)["delta"] == pytest.approx(cf.qos_delta(1e-6, 10))


def test_effcap_matrix_files(tmp_path, capsys):
    P = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.1, 0.5]])
    np.save(tmp_path / "P.npy", P)
    np.savetxt(tmp_path / "c.csv", [1.0, 0.5, 0.2], delimiter=",")
    rc, out, _ = run(["effcap", "--matrix", str(tmp_path / "P.npy"), "--capacities", str(tmp_path / "c.csv"),
                      "--delta", "1.5", "--json"], capsys)
    assert rc == 0
    assert json.loads(out)["effective_capacity"] == pytest.approx(cf.effective_capacity(P, [1, 0.5, 0.2], 1.5))


@pytest.mark.parametrize(
    "argv,needle",
    [
        ("effcap --p01 0.1 --p10 0.1 --c0 1 --c1 0.5 --rate 0.4", "no finite delta"),
        ("effcap --p01 0 --p10 0.1 --c0 1 --c1 0.5 --delta 1", "p01"),
        ("effcap --p01 0.1 --c0 1 --c1 0.5 --delta 1", "--p10"),
        ("effcap --p01 0.1 --p10 0.1 --c0 1 --c1 0.5", "exactly one"),
        ("formula window --rtt 0.03", "--cwnd-avg"),
        ("formula fairness", "values"),
    ],
)
def test_errors_are_one_line_exit_2(argv, needle, capsys):
    rc, _, err = run(argv.split(), capsys)
    assert rc == 2
    assert needle in err and err.count("\n") == 1


def test_formula_commands(capsys):
    rc, out, _ = run("formula atm --mss 1024 --sonet --json".split(), capsys)
    d = json.loads(out)
    assert rc == 0 and d["cells_per_packet"] == 23 and d["tcp_max_throughput"] == pytest.approx(125.8, abs=0.01)
    rc, out, _ = run("formula effcap-design --rtt 200 --s 30 --json".split(), capsys)
    assert json.loads(out)["N"] == 49
    rc, out, _ = run("formula window --cwnd-avg 91232 --rtt 0.03 --json".split(), capsys)
    assert json.loads(out)["throughput_mbps"] == pytest.approx(24.3285, rel=1e-5)
    assert json.loads(out)["capped"] is False
    # --cap that binds is said (a CLI audit, Nov 29: "= 1 Mbps" alone)
    rc, out, _ = run("formula window --cwnd-avg 65535 --rtt 0.1 --cap 1 --json".split(), capsys)
    assert json.loads(out)["throughput_mbps"] == 1.0 and json.loads(out)["capped"] is True
    rc, out, _ = run("formula window --cwnd-avg 65535 --rtt 0.1 --cap 1".split(), capsys)
    assert "= 1 Mbps (the --cap; the window alone gives 5.2428)" in out
    rc, out, _ = run("formula cwnd-avg --cwnd-max 64 --mss 1 --json".split(), capsys)
    assert json.loads(out)["cwnd_avg"] == 48.5 and "throughput_mbps" not in json.loads(out)["units"]
    rc, out, _ = run("formula cwnd-avg --cwnd-max 64 --mss 1 --rtt 0.1 --json".split(), capsys)
    assert json.loads(out)["units"]["throughput_mbps"] == "Mbit/s" and "throughput_mbps" in json.loads(out)
    rc, out, _ = run("formula fairness 1 1 1 1 --json".split(), capsys)
    assert json.loads(out)["jain_index"] == 1.0
    rc, out, _ = run("formula fifo-share 1 3 --mu 2 --json".split(), capsys)
    assert json.loads(out)["shares"] == [0.5, 1.5]
    rc, out, _ = run("formula qos-delta --epsilon 1e-6 --bmax 10".split(), capsys)
    assert rc == 0 and "delta" in out


def test_registered_in_main_cli():
    from tcpabr_model.cli import main

    assert main("effcap --p01 0.1 --p10 0.1 --c0 1 --c1 0.5 --delta 2 --json".split()) == 0


def test_validation_fast_checks_pass():
    from validation import checks

    for fn in (checks.check_two_state_closed_form, checks.check_effcap_limits, checks.check_eq28,
               checks.check_effcap_design, checks.check_eq2_closed_form, checks.check_atm, checks.check_fairness):
        for row in fn(True):
            assert row.passed, row


@pytest.mark.slow
def test_validation_quick_report_exit_status():
    r = subprocess.run([sys.executable, "-m", "validation", "--quick"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:]
