"""The ``network`` sweep method: the seed 003 backbone with three rate computations."""

import math

import pytest

from tcpabr_model.sweep import Grid, run_sweep
from tcpabr_model.sweep._methods import network_point


def test_three_rate_allocations_in_one_sweep():
    g = Grid({"rate_allocation": ["erica", "instcap", "effcap"]},
             fixed={"preset": "abr_backbone_compare_erica", "duration": 0.12, "replications": 1})
    df = run_sweep("network", g, seed=5, workers=1, progress=False)
    assert list(df.status) == ["ok"] * 3
    erica = df[df.rate_allocation == "erica"].iloc[0]
    inst = df[df.rate_allocation == "instcap"].iloc[0]
    # RM-cell results only where ERICA+ runs on RM cells
    assert erica.max_switch_queue_cells == erica.queue_max_cells
    assert erica.diverges in (False, True)
    assert math.isnan(inst.max_switch_queue_cells)
    for _, r in df.iterrows():
        assert 0.0 < r.efficiency <= 1.0
        assert 0.0 < r.fairness <= 1.0
        assert r.goodput_mbps > 0.0
        assert r.queue_mean_cells <= r.queue_max_cells


def test_same_seed_same_numbers():
    p = {"preset": "seed001_2conn_mtu1500_buf1088", "duration": 0.2, "replications": 2}
    a = network_point(p, 11)
    b = network_point(p, 11)
    assert a == pytest.approx(b, nan_ok=True)


@pytest.mark.parametrize("params, name", [
    ({}, "preset"),
    ({"preset": "no_such_preset"}, "preset"),
    ({"preset": "seed001_2conn_mtu1500_buf1088", "rate_allocation": "erica"}, "rate_allocation"),
    ({"preset": "abr_backbone_compare_erica", "rate_allocation": "magic"}, "rate_allocation"),
    ({"preset": "seed001_2conn_mtu1500_buf1088", "buffer": 3}, "buffer"),
])
def test_bad_points_name_the_parameter(params, name):
    with pytest.raises(ValueError, match=name):
        network_point(params, 0)
