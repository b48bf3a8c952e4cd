"""Plotting helpers: figure objects, axes, units in the labels, input validation."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.container import ErrorbarContainer  # noqa: E402

from tcpabr_model.plot import plot_efficiency_vs_psi, plot_fairness_vs_psi, plot_traces  # noqa: E402


def _table():
    psi = [1.0, 10.0, 100.0]
    a = pd.DataFrame({"psi": psi * 2, "bmax": [10] * 3 + [12] * 3, "conservative": [0.4, 0.6, 0.9] * 2,
                      "optimistic": [0.5, 0.7, 0.95] * 2})
    s = pd.DataFrame({"psi": psi * 2, "bmax": [10] * 3 + [12] * 3, "efficiency": [0.45, 0.66, 0.93] * 2,
                      "efficiency_hw": [0.01] * 6})
    return pd.concat([a, s], ignore_index=True)


def test_efficiency_vs_psi_band_and_points():
    ax = plot_efficiency_vs_psi(_table(), by="bmax")
    try:
        assert ax.get_xscale() == "log"
        assert "psi" in ax.get_xlabel() and "dimensionless" in ax.get_xlabel()
        assert "efficiency" in ax.get_ylabel() and "mean capacity" in ax.get_ylabel()
        bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
        assert len(bands) == 2  # one shaded band per buffer
        bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert len(bars) == 2
        assert np.allclose(bars[0].lines[0].get_ydata(), [0.45, 0.66, 0.93])
        labels = ax.get_legend_handles_labels()[1]
        assert any("bmax=10" in x and "analysis" in x for x in labels)
        assert ax.get_ylim() == (0.0, 1.02)
    finally:
        plt.close(ax.figure)


def test_efficiency_vs_psi_into_given_axes_and_bad_column():
    fig, ax = plt.subplots()
    try:
        out = plot_efficiency_vs_psi(_table().rename(columns={"psi": "x"}), psi="x", ax=ax, logx=False, ylim=None)
        assert out is ax and ax.get_xscale() == "linear"
        with pytest.raises(ValueError, match="psi"):
            plot_efficiency_vs_psi(_table(), psi="nope", ax=ax)
    finally:
        plt.close(fig)


def _fair():
    return pd.DataFrame({"psi": [0.1, 1.0, 10.0] * 2, "case": ["a"] * 3 + ["b"] * 3,
                         "fairness": [1.0, 0.95, 0.9, 0.99, 0.98, 0.97], "fairness_hw": [0.01] * 6,
                         "eff_conn0": [0.35, 0.4, 0.45] * 2, "eff_conn0_hw": [0.01] * 6,
                         "eff_conn1": [0.35, 0.3, 0.25] * 2, "eff_conn1_hw": [0.01] * 6})


def test_fairness_vs_psi():
    ax = plot_fairness_vs_psi(_fair(), by="case")
    try:
        assert "Jain" in ax.get_ylabel() and "dimensionless" in ax.get_ylabel()
        assert len(ax.containers) == 2
    finally:
        plt.close(ax.figure)
    ax = plot_fairness_vs_psi(_fair(), by="case", per_connection=True)
    try:
        assert len(ax.containers) == 4
        assert "goodput" in ax.get_ylabel()
        assert any("connection 2" in x for x in ax.get_legend_handles_labels()[1])
    finally:
        plt.close(ax.figure)
    with pytest.raises(ValueError, match="per_connection"):
        plot_fairness_vs_psi(_fair()[["psi", "fairness"]], per_connection=True)


@pytest.fixture(scope="module")
def trace():
    from tcpabr_model.sim import Scenario, simulate

    sc = Scenario.from_normalized(delta=40, bmax=10, psi=5, feedback="instcap", duration=20.0, warmup=1.0)
    return simulate(sc, replications=1, seed=3, trace=True).trace, sc


def test_traces(trace):
    tr, sc = trace
    fig = plot_traces(tr, cells_per_frame=sc.cells_per_frame, title="t")
    try:
        assert len(fig.axes) == 3
        w, q, r = fig.axes
        assert "packets" in w.get_ylabel() and "packets" in q.get_ylabel()
        assert "fraction of the high rate" in r.get_ylabel() and r.get_xlabel() == "time (s)"
        assert len(w.get_lines()) == 2  # cwnd and ssthresh of the one connection
        assert max(w.get_lines()[0].get_ydata()) >= 1
    finally:
        plt.close(fig)
    fig = plot_traces(tr, t_start=5.0, t_end=10.0)
    try:
        x = fig.axes[0].get_lines()[0].get_xdata()
        assert x.min() >= 5.0 and x.max() <= 10.0
        assert "cells" in fig.axes[1].get_ylabel()
    finally:
        plt.close(fig)


@pytest.mark.parametrize("kw", [dict(connection=1), dict(cells_per_frame=0), dict(t_start=5.0, t_end=1.0)])
def test_traces_bad_input(trace, kw):
    with pytest.raises(ValueError):
        plot_traces(trace[0], **kw)
    plt.close("all")


@pytest.mark.parametrize("psis, labelled", [
    ([20.0, 50.0, 100.0, 200.0], {"20", "50", "100", "200"}),   # Figs. 10 and 12: large psi
    ([0.1, 0.2, 0.5, 1.0], {"0.1", "0.2", "0.5", "1"}),         # Figs. 11, 13, 19-21: small psi
    ([0.01, 1000.0], {"0.01", "1", "100"}),                    # wide spans: decades only
])
def test_log_psi_axis_labels_readable_ticks(psis, labelled):
    df = pd.DataFrame({"psi": psis, "efficiency": [0.5] * len(psis), "efficiency_hw": [0.01] * len(psis)})
    ax = plot_efficiency_vs_psi(df)
    try:
        ax.figure.canvas.draw()
        lo, hi = ax.get_xlim()
        shown = {t.get_text() for t, v in zip(ax.get_xticklabels(), ax.get_xticks()) if lo <= v <= hi}
        assert labelled <= shown
        if len(psis) == 2:
            assert "2" not in shown and "5" not in shown
        assert ax.get_legend().get_title().get_text() == "bars: 95 % CI"
    finally:
        plt.close(ax.figure)


def test_short_legend_entries():
    ax = plot_efficiency_vs_psi(_table()[lambda d: d.efficiency.notna()], by="bmax", label="EFFCAP")
    try:
        assert ax.get_legend_handles_labels()[1] == ["EFFCAP, bmax=10", "EFFCAP, bmax=12"]
    finally:
        plt.close(ax.figure)


def test_text_group_values_name_their_curves():
    df = pd.DataFrame({"psi": [1.0, 10.0] * 2, "scheme": ["EFFCAP"] * 2 + ["TCP alone"] * 2,
                       "efficiency": [0.5, 0.6, 0.4, 0.5], "efficiency_hw": [0.01] * 4})
    ax = plot_efficiency_vs_psi(df, by="scheme")
    try:
        assert ax.get_legend_handles_labels()[1] == ["EFFCAP", "TCP alone"]
    finally:
        plt.close(ax.figure)
