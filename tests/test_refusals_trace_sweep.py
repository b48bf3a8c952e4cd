"""Refusals of the trace, analysis and sweep entry points: bad input says which option, the
value and the range in one line (exit status 2) or as a ValueError, before anything is computed."""

from pathlib import Path

import numpy as np
import pytest

import tcpabr_model.capacity as cap
from tcpabr_model.cli import main

DATA = Path(__file__).parent / "data"
TRACE = DATA / "markov3_outage.down"
PROC = Path("/proc")


def run(argv, capsys):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def refused(argv, capsys, *fragments):
    rc, out, err = run(argv, capsys)
    assert rc == 2 and out == "", (rc, out, err)
    assert len(err.strip().splitlines()) == 1, err
    for f in fragments:
        assert f in err, err
    return err


# 1. --regime-window checked without --regimes too --------------------------------------
@pytest.mark.parametrize("argv, fragment", [
    (["analyze", "--trace", TRACE, "--rtt", "0.1", "--bmax", "5", "--regime-window", "nan"],
     "--regime-window=nan is used only with --regimes R > 1"),
    (["analyze", "--trace", TRACE, "--rtt", "0.1", "--bmax", "5", "--regime-window", "-1"],
     "--regime-window=-1 is used only with --regimes R > 1"),
    (["analyze", "--trace", TRACE, "--rtt", "0.1", "--bmax", "5", "--regimes", "2", "--regime-window", "nan"],
     "--regime-window=nan is invalid: must be a finite number > 0.0"),
    (["trace", "fit", TRACE, "--regime-window", "-1"], "--regime-window=-1 is used only with --regimes R > 1"),
    (["trace", "fit", TRACE, "--regime-window", "0"], "--regime-window=0 is used only with --regimes R > 1"),
    (["trace", "fit", TRACE, "--regimes", "2", "--regime-window", "0"],
     "--regime-window=0.0 is invalid: must be > 0.0"),
])
def test_regime_window_refused(argv, fragment, capsys):
    refused(argv, capsys, fragment)


@pytest.mark.parametrize("value", [-1, 0, float("nan"), "2"])
def test_fit_trace_checks_regime_window_with_one_regime(value):
    with pytest.raises(ValueError, match=r"^regime_window=.* is invalid"):
        cap.fit_trace(TRACE, epoch=0.1, states=2, regime_window=value)


# 2. --mcr above the link's peak ----------------------------------------------------------
def test_analyze_trace_refuses_mcr_above_the_peak(capsys):
    refused(["analyze", "--trace", TRACE, "--rtt", "0.1", "--bmax", "5", "--mcr", "1e9"], capsys,
            "--mcr=1000000000.0 is invalid: must be in [0, 600] packets per second")


def test_link_scenario_refuses_mcr_above_the_peak():
    from tcpabr_model.trace_study import fit_link, link_scenario

    link = fit_link(cap.read_trace(TRACE), 0.1, states=3, patterns=2)
    with pytest.raises(ValueError, match=r"mcr=601.0 is invalid: must be in \[0, 600\] packets per second"):
        link_scenario(link, 5, "instcap", mcr=601.0)
    assert link_scenario(link, 5, "instcap", mcr=600.0).mcr == 1.0   # the peak itself is allowed


# 3. trace fit --out checked before fitting, named as --out -------------------------------
def test_trace_fit_out_checked_before_fitting(tmp_path, capsys):
    (tmp_path / "f.txt").write_text("x")
    refused(["trace", "fit", TRACE, "--out", tmp_path / "f.txt" / "m.json"], capsys,
            "--out=", "it is an existing file, not a folder")
    refused(["trace", "fit", TRACE, "--out", "m.txt"], capsys, "--out='m.txt' is invalid: must end in .json or .toml")


@pytest.mark.skipif(not PROC.is_dir(), reason="needs /proc")
def test_trace_fit_out_in_proc(capsys):
    refused(["trace", "fit", TRACE, "--out", "/proc/m.json"], capsys, "--out='/proc/m.json' is invalid")


# 4. --epoch too short for the trace: named ----------------------------------------------
@pytest.fixture()
def bursty(tmp_path):
    """One burst of 30 or 10 packets every 20 ms for a second: at 10 us epochs the levels are
    too far apart for eq. 23 (its exponential underflows)."""
    ms = np.arange(20, 1001, 20)
    tr = cap.Trace(np.repeat(ms, np.where(np.arange(ms.size) % 2 == 0, 30, 10)))
    path = tmp_path / "bursty.down"
    cap.write_trace(tr, path)
    return tr, path


def test_epoch_too_short_names_epoch(bursty, capsys):
    tr, path = bursty
    refused(["trace", "fit", path, "--epoch", "1e-5"], capsys,
            "--epoch=1e-05 is invalid", "must be >= 0.001 s, the trace's resolution")
    with pytest.raises(ValueError, match=r"^epoch=1e-05 is invalid"):
        cap.fit_trace(tr, epoch=1e-5)


# 5. Python API: a wrong type is a ValueError naming the parameter ------------------------
@pytest.mark.parametrize("psis", [5, None, "abc", 2.0])
def test_sweep_psi_needs_a_sequence(psis):
    from tcpabr_model import markov

    with pytest.raises(ValueError, match=r"^psis=.* is invalid: must be a non-empty sequence of real numbers"):
        markov.sweep_psi(markov.Scenario(), psis)


def test_sweep_psi_checks_each_psi_before_analysing():
    from tcpabr_model import markov

    with pytest.raises(ValueError, match=r"^psis\[1\]=0.5 is invalid: must be in \[1.0, "):
        markov.sweep_psi(markov.Scenario(delta=8, bmax=3, wmax=16), [2.0, 0.5])
    with pytest.raises(ValueError, match=r"^scenario='x' is invalid"):
        markov.sweep_psi("x", [2.0])


def test_estimate_chain_needs_a_scenario():
    from tcpabr_model import markov

    with pytest.raises(ValueError, match=r"^scenario='x' is invalid: must be a tcpabr_model.markov.Scenario"):
        markov.estimate_chain("x")
    with pytest.raises(ValueError, match=r"^limit='a' is invalid"):
        markov.estimate_chain(markov.Scenario(delta=8, bmax=3, wmax=16), limit="a")


@pytest.mark.parametrize("value", [None, 5, np.array([1, 2, 3])])
def test_read_and_fit_trace_name_the_parameter(value):
    with pytest.raises(ValueError, match=r"^path=.* is invalid: must be the path"):
        cap.read_trace(value)
    with pytest.raises(ValueError, match=r"^trace=.* is invalid: must be a Trace or the path"):
        cap.fit_trace(value)


def test_from_normalized_unknown_keyword():
    from tcpabr_model.sim import Scenario

    with pytest.raises(ValueError, match=r"^bogus=1 is invalid: not a keyword of Scenario.from_normalized "
                                         r"\(allowed: delta, bmax, psi, .*interval"):
        Scenario.from_normalized(bogus=1)
    with pytest.raises(ValueError, match=r"^rtt=0.1 is invalid in from_normalized: give delta"):
        Scenario.from_normalized(rtt=0.1)


# 6. sweep: a key the method does not take, refused before any point ----------------------
@pytest.mark.parametrize("method, argv", [
    ("analysis", ["--grid", "bogus=1,2"]),
    ("analysis", ["--file", "{tmp}/g.toml"]),
    ("simulation", ["--grid", "psi=2,3", "--fixed", "tcp_bogus=1"]),
    ("effcap_design", ["--grid", "delta=0.2,0.4", "--fixed", "s=0.03", "--fixed", "bogus=1"]),
])
def test_sweep_unknown_key_exit_2(method, argv, tmp_path, capsys, monkeypatch):
    import tcpabr_model.sweep._runner as runner

    (tmp_path / "g.toml").write_text("[grid]\nbogus = [1, 2]\n")
    monkeypatch.setattr(runner, "_run_point", lambda *a: pytest.fail("a point was computed"))
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    refused(["sweep", method, *argv, "--workers", "1"], capsys, "grid key ", "bogus=1 is invalid: not a parameter of")


# 7. an output folder that takes no file: the path given and what the system said ---------
@pytest.mark.skipif(not PROC.is_dir(), reason="needs /proc")
def test_output_path_message_names_the_path_given(capsys):
    from tcpabr_model.runtime.paths import check_output_file

    with pytest.raises(ValueError) as e:
        check_output_file("/proc/f.png", "--out")
    msg = str(e.value)
    assert msg.startswith("--out='/proc/f.png' is invalid: cannot create a file in its folder '/proc'")
    refused(["plot", DATA / "none.csv", "--x", "psi", "--y", "optimistic", "--out", "/proc/f.png"], capsys,
            "--out='/proc/f.png' is invalid")


# 8. analyze --trace needs --bmax ----------------------------------------------------------
def test_analyze_trace_needs_bmax(capsys):
    refused(["analyze", "--trace", TRACE, "--rtt", "0.1"], capsys, "--bmax is required with --trace")


# 9. --max-lag bounded by the trace, --select only without --states -----------------------
def test_trace_fit_max_lag_and_select(capsys):
    refused(["trace", "fit", TRACE, "--max-lag", "100000"], capsys,
            "--max-lag=100000 is invalid: must be an integer in [1, 400]")
    refused(["trace", "fit", TRACE, "--states", "3", "--select", "bic"], capsys,
            "--select=bic is used only without --states")
    rc, out, _ = run(["trace", "fit", TRACE, "--states", "3", "--max-lag", "400", "--json"], capsys)
    assert rc == 0 and '"acf_lags"' in out
