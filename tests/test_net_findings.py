"""The seeds' qualitative findings, reproduced by the network simulator."""

import pytest

from tcpabr_model.sim import simulate_network
from tcpabr_model.sim.presets.ubr_gfr import seed000_network, seed001_network, seed002_network


def test_seed001_no_loss_once_the_buffer_holds_both_windows():
    # MTU 9180: 2 windows of 5 segments x 192 cells = 1920 cells (seed 001 Sec. 4.1: no loss at 2176)
    big = simulate_network(seed001_network(connections=2, buffer=2176, mtu=9180, b=None, duration=3.0), 2, seed=1)
    small = simulate_network(seed001_network(connections=2, buffer=1088, mtu=9180, b=None, duration=3.0), 2, seed=1)
    assert big.counters["cells_dropped"] == 0
    assert small.counters["cells_dropped"] > 0
    # the FLR exceeds the CLR under PPD only by the frames cut in the middle (seed 001 Fig. 2b)
    assert small.frame_loss_ratio.mean >= small.cell_loss_ratio.mean


@pytest.mark.slow
def test_seed000_wan_guaranteed_rate_lifts_efficiency():
    """Seed 000 Sec. 5.1.1 obs. 2: for WANs with VBR 300 ms on/off, GR = 0 hurts TCP."""
    eff = {}
    for gr in (0.0, 0.5):
        r = simulate_network(seed000_network("wan", 5, 12000, 0.3, gr, "sd", "sack", duration=6.0), 3, seed=2)
        eff[gr] = r.efficiency
    assert eff[0.5].mean > eff[0.0].mean + 0.3
    assert eff[0.5].low > eff[0.0].high


@pytest.mark.slow
def test_seed002_throughput_proportional_to_thresholds():
    """Seed 002 Table 3: (mu_i / mu) / (r_i / r) close to 1 for every group of TCPs."""
    r = simulate_network(seed002_network("threshold", 1, duration=10.0), 3, seed=3)
    rat = r.samples["ratio"].mean(axis=0)
    groups = [rat[3 * g:3 * g + 3].mean() for g in range(5)]
    assert all(0.8 < x < 1.2 for x in groups)
    assert r.efficiency.mean > 0.9
