"""``Scenario(ca_increment='counter')`` (docs/model.md sec. 18): congestion avoidance grown by an
ACK counter, one packet per W ACKs, in place of eq. 1's coin per ACK."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpabr_model.cli import main
from tcpabr_model.markov import Scenario, analyze, simulate_embedded
from tcpabr_model.markov.kernels.interval import counter_window, increment_law


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 400), w=st.integers(1, 300))
def test_counter_law_is_two_points_with_the_binomial_mean(n, w):
    out = np.zeros(n + 2)
    lo, hi = counter_window(n, 1.0 / w, out)
    assert hi - lo in (0, 1) and 0 <= lo and hi <= n
    assert out[lo:hi + 1].sum() == pytest.approx(1.0, abs=1e-12)
    assert (np.arange(lo, hi + 1) * out[lo:hi + 1]).sum() == pytest.approx(n / w, abs=1e-9)
    assert lo == math.floor(n / w + 1e-12)


def test_counter_increment_is_capped_at_wmax():
    pmf = np.zeros(200)
    lo, hi = increment_law(90, 30, 31, pmf, True)      # 3 increments wanted, room for 1
    assert (lo, hi) == (1, 1) and pmf[1] == 1.0
    lo, hi = increment_law(45, 30, 128, pmf, True)     # 1.5: one or two, half and half
    assert (lo, hi) == (1, 2) and pmf[1] == pytest.approx(0.5) and pmf[2] == pytest.approx(0.5)


def test_default_is_the_papers_coins():
    """The default is eq. 1's binomial: the paper's point as stored (1e-12: the solve's last bits depend
    on the CPU's BLAS kernels; tests/test_markov_sack.py holds the same numbers)."""
    a = analyze(Scenario(delta=40, bmax=10, psi=20))
    b = analyze(Scenario(delta=40, bmax=10, psi=20, ca_increment="binomial"))
    assert (a.optimistic, a.conservative) == (b.optimistic, b.conservative)
    assert a.optimistic == pytest.approx(0.8998547915483416, rel=1e-12, abs=0)
    assert a.conservative == pytest.approx(0.8528197848199813, rel=1e-12, abs=0)


def test_bad_value_names_the_parameter():
    with pytest.raises(ValueError, match="ca_increment='coin' is invalid"):
        Scenario(ca_increment="coin")


@pytest.mark.parametrize("kw", [dict(feedback="instcap", psi=8), dict(feedback="none", psi=3),
                                dict(feedback="none", psi=3, tcp="sack")])
def test_counter_chain_matches_its_embedded_monte_carlo(kw):
    """The Monte Carlo draws floor(U + d / W) itself and never reads the matrix (measured: within one
    half-width at these points)."""
    sc = Scenario(delta=40, bmax=10, rate_ratio=0.5, ca_increment="counter", **kw)
    a = analyze(sc)
    m = simulate_embedded(sc, n_cycles=200_000, seed=3)
    assert abs(a.optimistic_eq18 - m.optimistic_eq18) <= 4 * m.optimistic_eq18_halfwidth
    assert abs(a.conservative - m.conservative) <= 4 * m.conservative_halfwidth


@settings(max_examples=25, deadline=None)
@given(delta=st.integers(4, 40), bmax=st.integers(1, 12), wmax=st.integers(4, 80), psi=st.sampled_from([1.5, 4, 50]),
       feedback=st.sampled_from(["instcap", "none"]), tcp=st.sampled_from(["timeout-only", "sack"]))
def test_counter_chain_is_stochastic_and_ordered(delta, bmax, wmax, psi, feedback, tcp):
    """Every row of the matrix sums to 1 (``transition_matrix`` raises otherwise), the counter's chain
    has no more nonzeros than the binomial one, and the bounds are ordered."""
    sc = Scenario(delta=delta, bmax=bmax, wmax=wmax, psi=psi, feedback=feedback, tcp=tcp, ca_increment="counter")
    a = analyze(sc, method="sparse-direct")
    b = analyze(Scenario(delta=delta, bmax=bmax, wmax=wmax, psi=psi, feedback=feedback, tcp=tcp), method="sparse-direct")
    assert a.nnz <= b.nnz
    assert 0.0 <= a.conservative <= a.prediction + 1e-12 <= a.optimistic + 2e-12 <= 1.0 + 2e-12


def test_timeout_only_at_constant_capacity_against_the_cell_simulator():
    """The simulated TCP grows cwnd by 1/cwnd per ACK: at constant capacity, B_max 10, Delta 40 (timer
    cycle) its efficiency is 0.7459 (one deterministic replication).  The counter's chain gives 0.7464
    (+0.1 %), the coins' 0.7091 (-4.9 %): two increments in one interval, which the coins allow at any
    window, overflow the buffer one round trip early."""
    from tcpabr_model.validity import validity_point

    r = validity_point(dict(psi=1e6, bmax=10, delta=40, wmax=128, feedback="none", rate_ratio=1.0,
                            loss_cycle="timer", ca_increment="counter"), 1, replications=1, duration_units=2e4,
                       diagnostics=False)
    assert r["prediction"] == pytest.approx(r["sim_efficiency"], rel=0.01)
    coins = analyze(Scenario(delta=40, bmax=10, psi=1e6, rate_ratio=1.0, feedback="none", loss_cycle="timer"))
    assert abs(coins.prediction - r["sim_efficiency"]) > 0.03 * r["sim_efficiency"]


def test_cli_names_the_option(capsys):
    assert main(["analyze", "--delta", "40", "--bmax", "10", "--psi", "20", "--ca-increment", "counter"]) == 0
    assert "ca_increment=counter" in capsys.readouterr().out


def test_trace_path_carries_the_option(capsys):
    """``tcpabr analyze --trace ... --ca-increment counter`` and ``analyze_link(..., ca_increment=)``: the
    fitted chain grows its window by the counter and the result says so."""
    from pathlib import Path

    from tcpabr_model.capacity import read_trace
    from tcpabr_model.trace_study import analyze_link, fit_link

    trace = str(Path(__file__).parent / "data" / "markov3_outage.down")
    link = fit_link(read_trace(trace), 0.05, patterns=4)
    a, b = (analyze_link(link, 10, "none", ca_increment=inc) for inc in ("binomial", "counter"))
    assert (a.ca_increment, b.ca_increment) == ("binomial", "counter")
    assert a.prediction != b.prediction and abs(a.prediction - b.prediction) < 0.05
    assert main(["analyze", "--trace", trace, "--rtt", "0.05", "--bmax", "10", "--ca-increment", "counter"]) == 0
    assert "ca_increment=counter" in capsys.readouterr().out
