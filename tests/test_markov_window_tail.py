"""``analyze(..., window_tail=)`` (docs/model.md sec. 19): the chain of a smaller window cap, where
the window spends at most ``window_tail`` of the time at that cap, stands for the chain of ``wmax``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpabr_model.cli import main
from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov.analysis import first_window, next_window
from tcpabr_model.trace_study import analyze_link, fit_link

from _small_chains import DATA, small_instcap

KEYS = ("prediction", "optimistic", "conservative", "mean_queue", "mean_source_buffer")


def _close(a, b, rel):
    for k in KEYS:
        x, y = getattr(a, k), getattr(b, k)
        assert x == pytest.approx(y, rel=rel, abs=1e-13), k


@settings(max_examples=40, deadline=None)
@given(delta=st.integers(6, 30), bmax=st.integers(2, 12), extra=st.integers(0, 120),
       psi=st.sampled_from([1.5, 3.0, 8.0, 20.0]), rr=st.sampled_from([0.25, 0.5, 0.8]),
       feedback=st.sampled_from(["none", "instcap"]), tcp=st.sampled_from(["timeout-only", "sack"]),
       ca=st.sampled_from(["binomial", "counter"]))
def test_the_searched_chain_gives_the_full_chains_numbers(delta, bmax, extra, psi, rr, feedback, tcp, ca):
    """Wherever the search stops below ``wmax`` (the window at the cap at most 1e-12 of the time),
    every efficiency and occupancy equals the full chain's to 1e-9; where it goes on to ``wmax``,
    the result is the full chain's to the last bit."""
    if delta * rr < 1:
        return
    sc = Scenario(delta=delta, bmax=bmax, psi=psi, rate_ratio=rr, wmax=delta + bmax + extra, feedback=feedback,
                  tcp=tcp, ca_increment=ca, loss_cycle="timer" if tcp == "timeout-only" else "paper")
    full = analyze(sc)
    got = analyze(sc, window_tail=1e-12)
    solved = got.scenario["window_solved"]
    assert got.scenario["wmax"] == sc.wmax and 2 <= solved <= sc.wmax
    tries = got.scenario["window_tries"]
    assert [t["wmax"] for t in tries][-1] == solved and all(a["wmax"] < b["wmax"] for a, b in zip(tries, tries[1:]))
    if solved < sc.wmax:
        assert got.window_cap_share <= 1e-12
        _close(got, full, 1e-9)
    else:
        assert got.to_dict() | {"scenario": None, "build_seconds": 0, "solve_seconds": 0, "assemble_seconds": 0} == \
            full.to_dict() | {"scenario": None, "build_seconds": 0, "solve_seconds": 0, "assemble_seconds": 0}


def test_a_large_receiver_window_is_not_built():
    """INSTCAP on the paper's link with a window cap of 400: a chain of a smaller cap is solved after
    a probe at ``(ceil(delta) + bmax) / 2`` = 25, where the window binds; TCP alone is not searched
    (its enumeration stops at the windows it reaches: 389 states with the cap 128 or 400)."""
    sc = Scenario(delta=40, bmax=10, psi=20, wmax=400, feedback="instcap")
    got = analyze(sc, window_tail=1e-12)
    assert first_window(sc) == 25
    tries = got.scenario["window_tries"]
    assert tries[0]["wmax"] == 25 and tries[0]["cap_share"] > 1e-3
    assert got.scenario["window_solved"] < 400 and got.window_cap_share <= 1e-12
    full = analyze(sc)
    assert got.n_states < full.n_states
    _close(got, full, 1e-9)
    alone = analyze(Scenario(delta=40, bmax=10, psi=20, wmax=400, feedback="none"), window_tail=1e-12)
    assert alone.scenario["window_solved"] == 400 and alone.n_states == 389
    timing = {"scenario": None, "build_seconds": 0, "solve_seconds": 0, "assemble_seconds": 0}
    assert alone.to_dict() | timing == analyze(Scenario(delta=40, bmax=10, psi=20, wmax=400, feedback="none")).to_dict() \
        | timing


def test_pattern_chain_with_outages_and_sack():
    """A K-level link with an outage and within-epoch patterns (INSTCAP, SACK): the same numbers."""
    from dataclasses import replace

    sc = replace(small_instcap(), wmax=300)
    got = analyze(sc, window_tail=1e-12)
    assert got.scenario["window_solved"] < 300
    _close(got, analyze(sc), 1e-9)


def test_cap_share_is_the_time_at_the_cap():
    """Without the search, ``window_cap_share`` is a share in [0, 1]: 0 where the window never
    reaches the cap (TCP alone, the paper's point), positive where INSTCAP's window grows into the
    segmentation buffer up to it between rate drops (the paper's wmax 128)."""
    assert analyze(Scenario(delta=40, bmax=10, psi=20, feedback="none")).window_cap_share == 0.0
    s = analyze(Scenario(delta=40, bmax=10, psi=20, feedback="instcap")).window_cap_share
    assert 1e-6 < s < 1e-2
    assert analyze(Scenario(delta=40, bmax=10, psi=20, feedback="instcap", wmax=400)).window_cap_share < 1e-30


def test_next_window_on_a_geometric_profile():
    """Shares halving per packet with 1e-3 at window 40, the cap: by the fit (a straight line,
    exact here) the share at W >= x is 2e-3 2^-(x - 40), at most 1e-12 / 1000 from x = 81 on; the next
    cap is 40 + ceil(1.15 x 41) = 88, and 5 more packets of margin move it to 40 + ceil(1.15 x 46) = 93.
    The scenario's wmax where the cap is within a tenth of it; doubled without a decay."""
    shares = 1e-3 * 0.5 ** (np.arange(41) - 40.0)
    assert next_window(40, 1000, shares, 1e-3, 0, 1e-12) == 88
    assert next_window(40, 1000, shares, 1e-3, 5, 1e-12) == 93
    assert next_window(40, 90, shares, 1e-3, 0, 1e-12) == 90
    assert next_window(40, 1000, np.full(41, 0.01), 0.05, 0, 1e-12) == 80


@pytest.mark.parametrize("tail", [-1e-12, 1e-3, 0.5, "1e-12"])
def test_bad_tail_names_the_parameter(tail):
    with pytest.raises(ValueError, match="window_tail=.* is invalid"):
        analyze(Scenario(delta=40, bmax=10, psi=20), window_tail=tail)


@pytest.mark.parametrize("kw, msg", [({"method": "foo"}, "method='foo' is invalid: must be one of 'structured'"),
                                     ({"tol": "abc"}, r"tol='abc' is invalid: must be a real number in \(0.0, 1.0\]"),
                                     ({"tol": 0.0}, r"tol=0.0 is invalid: must be in \(0.0, 1.0\]"),
                                     ({"tol": float("nan")}, "tol=nan is invalid")])
def test_bad_method_or_tol_names_the_parameter(kw, msg):
    # before the build (a CLI audit, Nov 29: a text tol reached the solver's comparison as a TypeError)
    with pytest.raises(ValueError, match=msg):
        analyze(Scenario(delta=40, bmax=10, psi=20), **kw)


def test_cli_window_tail(capsys):
    assert main(["analyze", "--delta", "40", "--bmax", "10", "--psi", "20", "--feedback", "instcap", "--wmax", "400",
                 "--window-tail", "1e-12", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scenario"]["wmax"] == 400 and d["scenario"]["window_solved"] < 400 and d["window_cap_share"] <= 1e-12
    assert main(["analyze", "--window-tail", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "--window-tail=0.5 is invalid" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_measured_link_searches_by_default():
    """``analyze_link`` searches (``LINK_WINDOW_TAIL``); ``window_tail=None`` solves the chain of
    ``wmax``: the same efficiencies to 1e-9 (a window cap of 400 where the window stays below 130)."""
    from tcpabr_model.capacity import read_trace

    link = fit_link(read_trace(DATA / "markov3_outage.down"), 0.1, states=3, patterns=2)
    a = analyze_link(link, 6, "instcap", wmax=400)
    b = analyze_link(link, 6, "instcap", wmax=400, window_tail=None)
    assert a.window_solved < a.wmax == b.window_solved
    for k in ("prediction", "conservative", "optimistic"):
        assert getattr(a, k) == pytest.approx(getattr(b, k), rel=1e-9)
