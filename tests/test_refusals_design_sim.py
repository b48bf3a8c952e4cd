"""Bad or ignored input of ``tcpabr design`` and ``tcpabr simulate`` is refused (one line, exit
2), in the API with a ValueError naming the parameter: utilisation grids, workers, simulate's
ignored-option rules in design, --interval / --feedback-delay without ABR feedback."""

import pytest

import tcpabr_model.cli as cli
from tcpabr_model.design.robust import design_held_out, design_over_psi
from tcpabr_model.design.search import Candidate, candidate_grid, design
from tcpabr_model.sim.scenario import Scenario

FAST = ["--duration", "1", "--warmup", "0.5", "--replications", "1", "--no-analysis"]


def _run(monkeypatch, capsys, module, argv):
    monkeypatch.setattr(cli, "_COMMAND_MODULES", (module,))
    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _refused(monkeypatch, capsys, module, argv, msg):
    code, _, err = _run(monkeypatch, capsys, module, argv)
    assert code == 2, err
    assert msg in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


# ---- defect 1: every utilisation value is checked; a scalar is a grid of one ------------------

@pytest.mark.parametrize("value, msg", [
    ((float("nan"),), "utilisation=nan is invalid: must be a finite number in (0.0, 1.0]"),
    ((0.9, 1.5), "utilisation=1.5 is invalid: must be in (0.0, 1.0]"),
    (1.5, "utilisation=1.5 is invalid: must be in (0.0, 1.0]"),
    ("0.9", "utilisation='0.9' is invalid: must be a number or a sequence of numbers"),
])
def test_candidate_grid_checks_every_utilisation(value, msg):
    with pytest.raises(ValueError) as e:
        candidate_grid(utilisation=value)
    assert msg in str(e.value)


def test_candidate_grid_takes_one_value_as_a_grid_of_one():
    assert candidate_grid(utilisation=0.9, m=4, n=16) == candidate_grid(utilisation=(0.9,), m=(4,), n=(16,))
    # 1 at the base interval and mcr 0 is the reference INSTCAP; elsewhere a candidate of its own
    assert Candidate("instcap") in candidate_grid(utilisation=1.0)
    assert Candidate("instcap", interval=0.05) in candidate_grid(utilisation=1.0, interval=(None, 0.05))


@pytest.mark.parametrize("value, msg", [("1.5", "--utilisation=1.5 is invalid: must be in (0.0, 1.0]"),
                                        ("nan", "--utilisation=nan is invalid")])
def test_design_cli_refuses_utilisation_above_one_and_nan(monkeypatch, capsys, value, msg):
    _refused(monkeypatch, capsys, "tcpabr_model.design.cli", ["design", *FAST, "--utilisation", value], msg)


def test_design_help_states_the_ranges_and_no_preset(monkeypatch, capsys):
    code, out, _ = _run(monkeypatch, capsys, "tcpabr_model.design.cli", ["design", "--help"])
    text = " ".join(out.split())
    assert code == 0
    assert "INSTCAP target utilisations to search, each in (0, 1]" in text
    duration = text[text.index("--duration DURATION measured"):text.index("--max-p95-delay MAX_P95_DELAY p95")]
    assert "--preset" not in duration and "500 with --quick" in duration


# ---- defect 2: workers ---------------------------------------------------------------------

def test_design_api_checks_workers():
    base = Scenario.from_normalized(delta=40, bmax=10, psi=1, duration_units=200)
    for w in (0, -1):
        with pytest.raises(ValueError, match=rf"workers={w} is invalid: must be an integer in \[1, 256\]"):
            design(base, (Candidate("none"),), replications=1, workers=w)
        with pytest.raises(ValueError, match=rf"workers={w} is invalid"):
            design_over_psi([base], [1.0], (Candidate("none"),), replications=1, workers=w)


def test_held_out_design_checks_workers():
    from pathlib import Path

    from tcpabr_model.capacity import read_trace

    trace = read_trace(str(Path(__file__).parent / "data" / "constant_1000pps.down"))
    base = Scenario(feedback="instcap", rtt=0.05, buffer_packets=10, payload_bytes=1460, capacity=trace,
                    duration=1.0)
    with pytest.raises(ValueError, match=r"workers=0 is invalid"):
        design_held_out(base, (Candidate("none"),), replications=1, workers=0)


@pytest.mark.parametrize("w", ["0", "-1"])
def test_design_cli_refuses_workers(monkeypatch, capsys, w):
    _refused(monkeypatch, capsys, "tcpabr_model.design.cli", ["design", *FAST, "--workers", w],
             f"--workers={w} is invalid: must be an integer in [1, 256]")


# ---- defect 3: simulate's ignored-option rules in design -------------------------------------

@pytest.mark.parametrize("argv, msg", [
    ([*FAST, "--capacity-offset", "nan"], "--capacity-offset is ignored without --capacity-trace"),
    ([*FAST, "--capacity-offset", "-1"], "--capacity-offset is ignored without --capacity-trace"),
    (["--quick", "--duration", "20", "--no-analysis", "--granularity", "0.1"],
     "--granularity is ignored without --rto estimator"),
    ([*FAST, "--rto-min", "2"], "--rto-min is ignored without --rto estimator"),
    ([*FAST, "--capacity", "m.json", "--rate-ratio", "0.3"], "--rate-ratio is ignored with --capacity"),
    (["--analysis-only", "--workers", "2"], "--workers is ignored with --analysis-only"),
])
def test_design_cli_refuses_ignored_options(monkeypatch, capsys, argv, msg):
    _refused(monkeypatch, capsys, "tcpabr_model.design.cli", ["design", *argv], msg)


def test_design_cli_keeps_options_its_candidates_use(monkeypatch, capsys):
    # --host-rate-factor (TCP alone), --interval and --feedback-delay (the ABR candidates)
    code, out, err = _run(monkeypatch, capsys, "tcpabr_model.design.cli",
                          ["design", *FAST, "--m", "2", "--n", "4", "--utilisation", "0.9", "--host-rate-factor",
                           "5", "--interval", "0.05", "--feedback-delay", "0.1"])
    assert code == 0, err
    assert "INSTCAP u=0.9 s=0.05" in out


# ---- defect 4: --interval / --feedback-delay without ABR feedback; the header ----------------

SIM = ["simulate", "--duration", "1", "--warmup", "0.5", "--replications", "2"]


@pytest.mark.parametrize("argv, msg", [
    (["--interval", "0.1"], "--interval is ignored without ABR feedback, --trace or --ci batch"),
    (["--feedback-delay", "0.1"], "--feedback-delay is ignored without ABR feedback"),
])
def test_simulate_refuses_abr_timing_for_tcp_alone(monkeypatch, capsys, argv, msg):
    _refused(monkeypatch, capsys, "tcpabr_model.sim.cli", [*SIM, "--feedback", "none", *argv], msg)


def test_simulate_tcp_alone_header_has_no_effcap_counts(monkeypatch, capsys, tmp_path):
    # --interval is the sampling interval of --trace for TCP alone: kept
    code, out, err = _run(monkeypatch, capsys, "tcpabr_model.sim.cli",
                          [*SIM, "--feedback", "none", "--interval", "0.1", "--trace", str(tmp_path / "t.npz")])
    assert code == 0, err
    head = out.splitlines()[0]
    assert head.startswith("feedback=none") and " M=" not in head and " N=" not in head
    code, out, err = _run(monkeypatch, capsys, "tcpabr_model.sim.cli", [*SIM, "--feedback", "effcap"])
    assert code == 0, err
    assert " M=[7] N=[49] " in out.splitlines()[0]
