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
