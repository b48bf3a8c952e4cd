"""The validity map: gap definition, like-with-like scenarios, a tiny map, the heat map."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpabr_model.validity import (
    add_gap_columns,
    continuous_sim_scenario,
    embedded_sim_scenario,
    point_gap,
    relative_gap,
    validity_point,
)


# ------------------------------------------------------------------ gap on hand-made rows
def test_gap_inside_band_is_zero():
    assert relative_gap(0.70, 0.74, 0.70, 0.80) == 0.0
    assert point_gap(0.75, 0.70, 0.80) == 0.0


def test_gap_below_is_negative_and_measured_from_the_ci_top():
    # CI [0.60, 0.64] below band [0.70, 0.80] (midpoint 0.75): (0.64 - 0.70) / 0.75
    assert relative_gap(0.60, 0.64, 0.70, 0.80) == pytest.approx(-0.08, abs=1e-15)
    assert point_gap(0.62, 0.70, 0.80) == pytest.approx((0.62 - 0.70) / 0.75, abs=1e-15)


def test_gap_above_is_positive_and_measured_from_the_ci_bottom():
    assert relative_gap(0.86, 0.90, 0.70, 0.80) == pytest.approx((0.86 - 0.80) / 0.75, abs=1e-15)
    assert point_gap(0.88, 0.70, 0.80) == pytest.approx((0.88 - 0.80) / 0.75, abs=1e-15)


def test_ci_touching_the_band_counts_as_inside():
    assert relative_gap(0.60, 0.70, 0.70, 0.80) == 0.0     # top of the CI on the conservative bound
    assert relative_gap(0.80, 0.85, 0.70, 0.80) == 0.0
    # the point estimate is outside, the interval is not: only gap_point sees it
    assert point_gap(0.65, 0.70, 0.80) < 0 and relative_gap(0.60, 0.71, 0.70, 0.80) == 0.0


def test_gap_vectorised_and_input_checks():
    g = relative_gap([0.5, 0.75, 0.9], [0.6, 0.8, 0.95], [0.7, 0.7, 0.7], [0.8, 0.8, 0.8])
    np.testing.assert_allclose(g, [(0.6 - 0.7) / 0.75, 0.0, (0.9 - 0.8) / 0.75], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="conservative > optimistic"):
        relative_gap(0.5, 0.6, 0.8, 0.7)
    with pytest.raises(ValueError, match="sim_low > sim_high"):
        relative_gap(0.6, 0.5, 0.7, 0.8)
    with pytest.raises(ValueError, match="conservative > optimistic"):
        point_gap(0.5, 0.8, 0.7)


@settings(max_examples=200, deadline=None)
@given(c=st.floats(0.05, 0.9), w=st.floats(0.0, 0.3), m=st.floats(0.0, 1.2), h=st.floats(0.0, 0.2))
def test_gap_properties(c, w, m, h):
    o = c + w
    lo, hi = m - h, m + h
    g = relative_gap(lo, hi, c, o)
    gp = point_gap(m, c, o)
    # sign: below / inside / above
    if hi < c:
        assert g < 0
    elif lo > o:
        assert g > 0
    else:
        assert g == 0
    # the interval-aware gap is never larger in size than the point gap, and of the same sign
    assert abs(g) <= abs(gp) + 1e-12
    assert g == 0 or math.copysign(1, g) == math.copysign(1, gp)


def test_add_gap_columns_verdicts_and_failed_rows():
    df = pd.DataFrame({
        "conservative": [0.7, 0.7, 0.7, np.nan],
        "optimistic": [0.8, 0.8, 0.8, np.nan],
        "sim_efficiency": [0.75, 0.60, 0.90, np.nan],
        "sim_low": [0.74, 0.58, 0.88, np.nan],
        "sim_high": [0.76, 0.62, 0.92, np.nan],
    })
    out = add_gap_columns(df)
    assert list(out["verdict"]) == ["inside", "below", "above", "failed"]
    assert out["gap"].iloc[1] == pytest.approx((0.62 - 0.7) / 0.75)
    assert math.isnan(out["gap"].iloc[3])
    with pytest.raises(ValueError, match="missing columns"):
        add_gap_columns(df.drop(columns="sim_low"))


# ------------------------------------------------------------------ like-with-like scenarios
def test_embedded_scenario_is_the_analysis_rate_rule():
    sc = embedded_sim_scenario(delta=40, bmax=10, psi=20, wmax=48, feedback="instcap")
    assert sc.capacity_mode == "embedded"
    assert sc.interval == pytest.approx(max(sc.rtt))          # INSTCAP measured over the last Delta
    assert sc.feedback_delay == (0.0,)                        # ... and applied at once
    assert sc.period == pytest.approx(sc.rtt[0])
    assert sc.rtt[0] / sc.time_unit == pytest.approx(40)      # Delta in packet times
    assert sc.buffer_packets == 10 and sc.tcp.wmax == 48 and sc.psi == pytest.approx(20)


def test_tcp_alone_pipe_is_delta_ip_packets():
    for mk in (embedded_sim_scenario, continuous_sim_scenario):
        sc = mk(delta=40, bmax=10, psi=5, wmax=128, feedback="none")
        packet_s = sc.ip_packet_bytes / (sc.slot_bytes / sc.slot_seconds)   # IP packet at the high rate
        assert sc.rtt[0] / packet_s == pytest.approx(40, rel=1e-12)
        assert sc.psi == pytest.approx(5)


def test_continuous_scenario_is_the_testbed():
    sc = continuous_sim_scenario(delta=40, bmax=12, psi=3, wmax=128, feedback="instcap")
    assert sc.capacity_mode == "continuous"
    assert sc.interval == pytest.approx(0.03)                 # s = 30 ms
    assert sc.feedback_delay == sc.rtt                        # fed back after Delta
    with pytest.raises(ValueError, match="interval"):
        embedded_sim_scenario(feedback="instcap", interval=0.01)


def test_validity_point_small_and_input_checks():
    r = validity_point({"psi": 20, "bmax": 10, "delta": 40, "wmax": 48, "feedback": "instcap", "mode": "embedded"},
                       3, replications=2, duration_units=20_000)
    assert 0 < r["conservative"] <= r["optimistic"] <= 1
    assert r["sim_low"] <= r["sim_efficiency"] <= r["sim_high"]
    # ATM cell tax: 540/636 of the wire efficiency
    assert r["sim_efficiency_atm"] == pytest.approx(r["sim_efficiency"] * 540 / 636, rel=1e-9)
    with pytest.raises(ValueError, match="mode"):
        validity_point({"mode": "fluid"}, 0)
    with pytest.raises(ValueError, match="allowed keys"):
        validity_point({"buffer": 3}, 0)
    with pytest.raises(ValueError, match="psi"):
        validity_point({"psi": 0.5}, 0)


def test_slow_start_diagnostic_bounds_and_large_buffer():
    # buffer about the pipe: III-B.3 holds, so (almost) no loss cycle starts in slow start
    big = validity_point({"psi": 50, "bmax": 40, "delta": 40, "wmax": 128, "feedback": "none",
                          "mode": "embedded"}, 1, replications=1, duration_units=60_000)
    small = validity_point({"psi": 50, "bmax": 5, "delta": 40, "wmax": 128, "feedback": "none",
                            "mode": "embedded"}, 1, replications=1, duration_units=60_000)
    assert big["ss_timeouts"] > 5 and small["ss_timeouts"] > 5
    assert 0.0 <= big["ss_timeout_fraction"] <= 1.0 and 0.0 <= small["ss_timeout_fraction"] <= 1.0
    assert small["ss_timeout_fraction"] > big["ss_timeout_fraction"]


# ------------------------------------------------------------------ the map and its heat map
def _tiny_map(tmp_path=None, workers=1):
    from tcpabr_model.validity import validity_map

    return validity_map({"psi": [3.0, 50.0], "bmax": [10], "delta": [40.0], "wmax": [48],
                         "feedback": ["instcap", "none"], "mode": ["embedded"]},
                        seed=5, replications=2, duration_units=20_000, workers=workers,
                        cache_dir=tmp_path, progress=False)


def test_tiny_validity_map_rows_gaps_and_cache(tmp_path):
    df = _tiny_map(tmp_path)
    assert len(df) == 4 and (df["status"] == "ok").all()
    assert list(zip(df["psi"], df["feedback"])) == [(3.0, "instcap"), (3.0, "none"),
                                                    (50.0, "instcap"), (50.0, "none")]   # grid order
    for _, r in df.iterrows():
        assert r["conservative"] <= r["optimistic"]
        assert r["gap"] == pytest.approx(relative_gap(r["sim_low"], r["sim_high"], r["conservative"],
                                                      r["optimistic"]), abs=0)
        assert r["verdict"] == ("inside" if r["gap"] == 0 else "below" if r["gap"] < 0 else "above")
        # the total delay: the two components add up (one bottleneck, no propagation), on both sides
        assert r["sim_total_delay"] == pytest.approx(r["sim_source_delay"] + r["sim_queueing_delay"], rel=1e-9)
        src = r["source_delay"] if r["feedback"] == "instcap" else 0.0
        assert r["total_delay"] == pytest.approx(r["queueing_delay"] + src, rel=1e-12)
        hw = r["sim_total_delay_half_width"]
        assert r["delay_ok"] == (abs(r["total_delay"] - r["sim_total_delay"]) <= hw + 0.05 * r["sim_total_delay"])
    again = _tiny_map(tmp_path)                                                 # from the cache
    assert again["cached"].all()
    np.testing.assert_array_equal(again["sim_efficiency"].to_numpy(), df["sim_efficiency"].to_numpy())


def test_validity_grid_defaults_and_checks():
    from tcpabr_model.validity import QUICK_GRID, validity_grid

    g = validity_grid({"psi": [5.0]}, quick=True)
    pts = g.points
    assert len(pts) == len(QUICK_GRID["bmax"]) * len(QUICK_GRID["wmax"]) * 2 * 2
    assert {p["psi"] for p in pts} == {5.0}
    with pytest.raises(ValueError, match="psi"):
        validity_grid({"psi": [0.5]})
    with pytest.raises(ValueError, match="invalid axes"):
        validity_grid({"buffer": [10]})
    with pytest.raises(ValueError, match="mode"):
        validity_grid({"mode": ["fluid"]})


def _synthetic_map():
    rows = []
    for fb in ("instcap", "none"):
        for mode in ("embedded", "continuous"):
            for b in (10, 20):
                for psi in (2.0, 20.0, 100.0):
                    g = {2.0: 0.05, 20.0: 0.0, 100.0: -0.03}[psi] * (1 if fb == "instcap" else 2)
                    rows.append({"feedback": fb, "mode": mode, "psi": psi, "bmax": b, "delta": 40.0,
                                 "wmax": 48, "gap": g, "gap_point": g})
    df = pd.DataFrame(rows)
    df.loc[6, "gap"] = np.nan      # a failed point: (instcap, continuous, bmax 10, psi 2)
    return df


def test_plot_gap_heatmap_panels_and_values():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tcpabr_model.plot import plot_gap_heatmap

    df = _synthetic_map()
    fig = plot_gap_heatmap(df)
    panels = [a for a in fig.axes if a.get_visible() and a.images]
    assert len(panels) == 4                                   # one per (feedback, mode)
    inst = panels[1]                                          # groups sorted: (instcap, embedded) second
    assert "INSTCAP" in inst.get_title() and "embedded" in inst.get_title()
    z = inst.images[0].get_array()
    np.testing.assert_allclose(np.asarray(z), [[0.05, 0.0, -0.03]] * 2)   # rows bmax 10, 20; cols psi
    texts = {t.get_text() for t in inst.texts}
    assert {"+5.0", "0", "-3.0"} <= texts
    first = panels[0].images[0].get_array()                   # (instcap, continuous) holds the NaN
    assert np.ma.is_masked(first) and first.mask[0, 0]
    assert [t.get_text() for t in inst.get_xticklabels()] == ["2", "20", "100"]
    plt.close(fig)
    # one panel into a given axes; several panels into one axes is refused
    fig2, ax = plt.subplots()
    one = df[(df["feedback"] == "none") & (df["mode"] == "embedded")]
    assert plot_gap_heatmap(one, ax=ax, y="bmax") is fig2
    with pytest.raises(ValueError, match="panels"):
        plot_gap_heatmap(df, ax=ax)
    with pytest.raises(ValueError, match="missing columns"):
        plot_gap_heatmap(df.drop(columns="gap"))
    with pytest.raises(ValueError, match="vmax"):
        plot_gap_heatmap(one, vmax=-1)
    plt.close("all")


def test_the_map_summary_counts_the_delay_where_the_throughput_holds():
    from _scripts import load_script

    vm = load_script("analytics/validity_map.py", "validity_map_script")
    df = pd.DataFrame({"feedback": ["instcap"] * 4, "mode": ["embedded"] * 4, "verdict": ["inside"] * 4,
                       "gap": [0.0] * 4, "sim_half_width": [0.01] * 4, "prediction_gap": [0.0] * 4,
                       "prediction_ok": [True, True, True, False], "delay_ok": [True, False, True, True],
                       "sim_total_delay": [5.0, 6.0, np.nan, 7.0]})
    summ = vm.summarize(df)
    # of the three points whose throughput holds, one has no simulated delay; one of the other two holds
    assert summ["delay_within_ci_5pct_where_prediction_ok"].iloc[0] == pytest.approx(0.5)
    assert np.isnan(vm.summarize(df.drop(columns=["delay_ok"]))["delay_within_ci_5pct_where_prediction_ok"].iloc[0])
