"""Refusals found by trying the command line as a user would (Nov 28): a figure list with an
empty item, and ``tcpabr presets --json`` that finds nothing still prints JSON."""

import json

import pytest

from tcpabr_model.cli import main
from tcpabr_model.reproduce._figure_numbers import parse_figures


@pytest.mark.parametrize("figs", ["8,,", "8,,9", ",8", "8,"])
def test_figure_list_with_an_empty_item_is_refused(figs):
    with pytest.raises(ValueError, match="empty item"):
        parse_figures(figs)


def test_figure_list_still_parses():
    assert parse_figures("9, 8,8") == (8, 9)
    assert parse_figures("14") == (14,)


def test_reproduce_cli_refuses_an_empty_item(capsys):
    assert main(["reproduce", "--figures", "8,,", "--quick"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--figures" in err[0]


def test_presets_json_without_a_match_is_json(capsys):
    assert main(["presets", "--filter", "no-such-preset-zzzz", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["presets"] == [] and "no-such-preset-zzzz" in d["message"]


def test_memory_limit_advice_for_tcp_alone_is_one_the_cli_takes():
    # simulate --feedback none refuses --interval without --trace or --ci batch, so the advice
    # to lengthen the interval says how
    from tcpabr_model.sim import Scenario
    from tcpabr_model.sim.driver import check_resources

    with pytest.raises(ValueError, match="--interval with --ci batch"):
        check_resources(Scenario(feedback="none", duration=5e6))
    with pytest.raises(ValueError) as e:
        check_resources(Scenario(feedback="instcap", duration=5e6))
    assert "--ci batch" not in str(e.value)


def test_shared_run_keeps_the_psi_the_simulation_computes():
    # Fig. 14's points (tau, rtt in seconds) share their runs with Figs. 10-13's (delta, psi): the
    # row of the asking point must keep the psi the simulation reports, not drop it as the
    # representative's parameter (the quick report's Fig. 14 had two points without psi)
    from tcpabr_model.reproduce._run import _key, _run_method

    p = {"feedback": "instcap", "rtt": 0.2, "tau": 0.4, "duration": 10.0, "warmup": 0.5, "replications": 1}
    rep = {"feedback": "instcap", "delta": 40.0, "psi": 2.0, "duration_units": 2000.0, "warmup_units": 100.0,
           "replications": 1}
    out, runs = _run_method("simulation", [p], seed=0, cache_dir=None, workers=1, client=None, progress=False,
                            representatives={_key(p): rep})
    row = out[_key(p)]
    assert runs == 1 and row["status"] == "ok"
    assert abs(row["psi"] - 2.0) < 1e-9
    assert "delta" not in row and row["tau"] == 0.4      # the asking point's spelling otherwise
