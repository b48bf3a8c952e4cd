"""Bad input of ``tcpabr simulate`` and ``tcpabr presets``: one line on stderr, the user's
flag names, an exit status, never a traceback (issue 17 cases, issue 14 item 5)."""

import pytest

import tcpabr_model.cli as cli


@pytest.fixture
def main(monkeypatch):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", ("tcpabr_model.sim.cli", "tcpabr_model.sim.presets.cli"))
    return cli.main


@pytest.mark.parametrize("argv, rc, msg", [
    (["simulate", "--trace", "/proc/version/x.npz", "--duration", "1"], 2,
     "--trace='/proc/version' is invalid: it is an existing file, not a folder"),
    (["simulate", "--psi", "1e-9"], 2, "psi=1e-09 is invalid with --duration 2000 s: the capacity would change"),
    (["simulate", "--duration", "1e8"], 2, "duration=1e+08 s is invalid: one replication keeps 3.33e+09"),
    (["simulate", "--preset", "seed001_testbed", "--feedback", "effcap", "--bmax", "5"], 2,
     "--feedback, --bmax are ignored with --preset"),
    (["simulate", "--delta", "1e9"], 2, "delta=1000000000.0 is invalid: must be in (0.0, 20000.0]"),
    (["simulate", "--host-rate-factor", "5"], 2, "--host-rate-factor is ignored without --feedback none"),
    (["simulate", "--batches", "5"], 2, "--batches is ignored without --ci batch"),
    (["simulate", "--granularity", "0.1"], 2, "--granularity is ignored without --rto estimator"),
    (["simulate", "--variant", "vegas"], 2, "invalid choice: 'vegas'"),
    (["simulate", "--preset", "abr_backbone_novbr_buf1000", "--replications", "3"], 2,
     "replications=3 is invalid for network"),
    (["presets", "--filter", "zzzz"], 1, "no preset name contains 'zzzz'"),
    # issue 24: --delta at its default value is still a choice, and a list entry names its flag
    (["simulate", "--delta", "40", "--rtt", "0.5"], 2, "--rtt and --delta are exclusive"),
    (["simulate", "--feedback-delay", "-0.1"], 2, "--feedback-delay=-0.1 (entry 0) is invalid: must be in [0.0,"),
])
def test_bad_input_is_one_line_with_the_users_names(main, capsys, argv, rc, msg):
    try:
        code = main(argv)
    except SystemExit as e:      # argparse's own errors (choices)
        code = e.code
    err = capsys.readouterr().err
    assert code == rc
    assert msg in err
    assert "Traceback" not in err
    if rc != 2 or "invalid choice" not in msg:
        assert len(err.strip().splitlines()) == 1


def test_a_deterministic_preset_runs_once_and_prints_no_interval(main, capsys):
    rc = main(["simulate", "--preset", "abr_backbone_novbr_buf1000", "--duration", "0.02"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "replications 1" in out and "no randomness" in out
    assert "(no CI: n = 1)" in out and "+/- nan" not in out
