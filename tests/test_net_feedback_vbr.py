"""INSTCAP/EFFCAP feedback measured net of VBR (``Port.feedback_net_of_vbr``)."""

import dataclasses as dc

import pytest

from tcpabr_model.sim import Port, simulate_network
from tcpabr_model.sim.presets.abr_backbone import get_abr_preset


def _case(vbr_fraction, duty, period, rate_allocation="instcap"):
    c = get_abr_preset("abr_backbone_novbr_buf100000").with_rate_allocation(rate_allocation)
    if vbr_fraction > 0:
        c = dc.replace(c, vbr_duty=duty, vbr_period_s=period, vbr_rate_mbps=vbr_fraction * c.link_mbps)
    return c


def _run(net, seed=1):
    return simulate_network(net, replications=1, seed=seed)


def _with_flag(net, flag):
    port = dc.replace(net.ports[0], feedback_net_of_vbr=flag)
    return net.with_(ports=(port,))


def test_without_vbr_the_flag_changes_nothing():
    net = _case(0.0, 0, 0.1).to_network(duration_s=0.5)
    assert net.ports[0].feedback_net_of_vbr  # the backbone presets set it for INSTCAP/EFFCAP
    on, off = _run(net), _run(_with_flag(net, False))
    assert on.counters == off.counters
    assert on.queue_max[0] == off.queue_max[0]


def test_instcap_feeds_back_the_capacity_left_by_vbr():
    """VBR holds half of the link 99 % of the time: INSTCAP measured net of VBR feeds back
    about 0.5, the 15 VCs share it and the switch queue stays small; measured on the whole
    port capacity it feeds back 1.0, the VCs send twice what is left and the queue grows."""
    net = _case(0.5, 0.99, 0.1).to_network(duration_s=1.0)
    on, off = _run(net), _run(_with_flag(net, False))
    link = 155.52e6
    payload = link * 512 / (12 * 53)          # TCP payload rate of the whole link, bit/s
    got = sum(e.mean for e in on.goodput_bps)
    assert got <= 0.5 * payload * 1.02
    assert got >= 0.4 * payload               # ABR uses most of what VBR leaves
    assert on.queue_max[0] < 2000
    assert off.queue_max[0] > 20 * on.queue_max[0]


def test_effcap_with_long_memory_feeds_back_the_minimum():
    """VBR at 80 % of the link on 80 ms of every 100 ms: EFFCAP's memory (8 RTT = 240 ms)
    always holds an on period, so it feeds back about 0.2 of the link, less than INSTCAP."""
    eff = _run(_case(0.8, 0.8, 0.1, "effcap").to_network(duration_s=2.0))
    ins = _run(_case(0.8, 0.8, 0.1, "instcap").to_network(duration_s=2.0))
    payload = 155.52e6 * 512 / (12 * 53)
    g_eff = sum(e.mean for e in eff.goodput_bps)
    assert 0.15 * payload <= g_eff <= 0.21 * payload
    assert g_eff < sum(e.mean for e in ins.goodput_bps)
    assert eff.queue_max[0] < 100


def test_flag_is_validated():
    with pytest.raises(ValueError, match="feedback_net_of_vbr"):
        Port(feedback_net_of_vbr="yes")
