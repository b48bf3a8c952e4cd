"""A window cap of 1 or 2 packets on a measured link (TCP alone, go-back-N's burst of docs/model.md
sec. 15b): the regeneration threshold ``floor(m / 2)`` may lie beyond the chain's thresholds, which is
no state, not an index error (found by a CLI audit: ``tcpabr analyze --trace T --wmax 1`` printed a
traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcpabr_model.capacity import read_trace
from tcpabr_model.cli import main
from tcpabr_model.trace_study import analyze_link, fit_link

TRACE = Path(__file__).parent / "data" / "markov3_outage.down"


@pytest.mark.parametrize("wmax", [1, 2, 3])
def test_tiny_window_caps_are_analysed(wmax):
    link = fit_link(read_trace(str(TRACE)), 0.1, patterns=2)
    r = analyze_link(link, 6, "none", wmax=wmax)
    assert 0.0 < r.conservative <= r.prediction <= r.optimistic <= 1.0
    assert r.wmax == wmax


def test_tiny_window_through_the_cli(capsys):
    assert main(["analyze", "--trace", str(TRACE), "--rtt", "0.1", "--bmax", "6", "--feedback", "none",
                 "--wmax", "1", "--json"]) == 0
    assert '"prediction"' in capsys.readouterr().out


def test_a_bound_crossing_the_prediction_by_rounding_only_is_put_right():
    from tcpabr_model.markov.analysis import ordered_bounds
    p = 0.03132255916741015
    eff = {"prediction": p, "conservative": 0.031322559167410155, "optimistic": p * (1 - 1e-15)}
    ordered_bounds(eff)
    assert eff["conservative"] == p == eff["optimistic"]
    eff = {"prediction": p, "conservative": p * 1.001, "optimistic": p * 0.999}   # not rounding: shown
    ordered_bounds(eff)
    assert eff["conservative"] == p * 1.001 and eff["optimistic"] == p * 0.999
