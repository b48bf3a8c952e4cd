"""Network kernel: structural answers (zero loss, starvation, GR share, SACK, conservation)."""

import numpy as np
import pytest

from tcpabr_model.sim import DropPolicy, Network, Port, TcpParams, VbrSource, Vc, simulate_network
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.driver import run_network_replication


def run1(net, seed=0, force=()):
    out, _, kin = run_network_replication(net, np.random.default_rng(seed), force)
    return out, kin


def lan(n=3, buf=1000, policy="ppd", variant="sack", wmax=40, gr=0.0, vbr=(), duration=0.2, **kw):
    ports = (Port(ubr_buffer=buf, ubr_policy=DropPolicy(policy), gr=gr),)
    vcs = tuple(Vc(route=(0,), access_delay=1e-4, egress_delay=2e-4) for _ in range(n))
    return Network(ports=ports, vcs=vcs, vbr=vbr, tcp=TcpParams(variant=variant, wmax=wmax, **kw),
                   duration=duration)


@pytest.mark.parametrize("variant", ["timeout-only", "reno", "sack"])
@pytest.mark.parametrize("n, wmax", [(2, 10), (4, 30), (6, 16)])
def test_buffer_holding_every_receiver_window_loses_no_cell(variant, n, wmax):
    net = lan(n=n, wmax=wmax, variant=variant, buf=1)
    k = n * wmax * net.cells_per_frame          # seed 001 Sec. 4.1: buffer >= sum of windows
    (st, *_rest), _ = run1(net.with_(ports=(Port(ubr_buffer=k, ubr_policy=DropPolicy("tail")),)))
    assert st[:, L.S_CDROP].sum() == 0
    assert st[:, L.S_TIMEOUTS].sum() == 0
    assert st[:, L.S_GOOD].min() > 0
    # a quarter of it: losses appear (the round trip holds only a few frames)
    (st2, *_r), _ = run1(net.with_(ports=(Port(ubr_buffer=k // 4,
                                               ubr_policy=DropPolicy("tail")),)))
    assert st2[:, L.S_CDROP].sum() > 0


def test_gr_zero_and_full_rate_vbr_starves_ubr_during_on_period():
    net = lan(vbr=(VbrSource(route=(0,), rate=1.0, on=10.0, off=1.0),), duration=0.05)
    (st, fs, vst, vfs, pst, *_r), _ = run1(net)
    assert pst[0, L.PS_SERVED0 + L.CL_UBR] == 0
    assert st[:, L.S_GOODALL].sum() == 0
    assert pst[0, L.PS_SERVED0 + L.CL_VBR] == vst[3, L.V_VBRSENT]     # VBR never queues


@pytest.mark.parametrize("gr", [0.1, 0.5])
def test_guaranteed_rate_share_while_vbr_saturates(gr):
    net = lan(vbr=(VbrSource(route=(0,), rate=1.0, on=10.0, off=1.0),), gr=gr, duration=0.05)
    (st, fs, vst, vfs, pst, pfs, *_r), kin = run1(net)
    slots = kin["gpar"][L.G_NSLOTS]
    ubr = pst[0, L.PS_SERVED0 + L.CL_UBR]
    vbr = pst[0, L.PS_SERVED0 + L.CL_VBR]
    assert ubr + vbr <= slots
    # UBR is backlogged after the first round trip: it gets GR of the cell slots
    assert ubr == pytest.approx(gr * slots, rel=0.05)
    assert st[:, L.S_GOODALL].sum() > 0


def test_capacity_unused_by_vbr_goes_to_ubr():
    # VBR at 30 % of the link, GR = 0: UBR gets the other 70 %
    net = lan(vbr=(VbrSource(route=(0,), rate=0.3, on=10.0, off=1.0),), duration=0.1, wmax=200, buf=20000)
    (st, fs, vst, vfs, pst, pfs, *_r), kin = run1(net)
    slots = kin["gpar"][L.G_NSLOTS]
    assert pst[0, L.PS_SERVED0 + L.CL_UBR] > 0.6 * slots


def test_sack_retransmits_only_the_missing_segments():
    net = lan(n=1, wmax=60, buf=100000, duration=0.5)
    drops = [(0, 30), (0, 33), (0, 37)]
    (st, *_r), _ = run1(net, force=drops)
    assert st[0, L.S_RETX] == 3
    assert st[0, L.S_FASTRTX] == 1
    assert st[0, L.S_TIMEOUTS] == 0
    assert st[0, L.S_CDROP] == 3 * net.cells_per_frame
    # Reno (one loss per round trip) and timeout-only (go-back-N) retransmit more
    (st_r, *_r), _ = run1(net.with_(tcp=TcpParams(variant="reno", wmax=60)), force=drops)
    (st_v, *_r), _ = run1(net.with_(tcp=TcpParams(variant="timeout-only", wmax=60)), force=drops)
    assert st_v[0, L.S_RETX] > 3
    assert st_r[0, L.S_RETX] + st_r[0, L.S_TIMEOUTS] > 3


def _chain():
    """Parking lot: ports 0 -> 1 (2 ms link), VCs 0-1 cross both, VC 2 only port 1; VBR on port 0."""
    ports = (Port(ubr_buffer=600, ubr_policy=DropPolicy("epd"), link_delay=0.002, gr=0.2),
             Port(rate=0.6, ubr_buffer=400, ubr_policy=DropPolicy("sd")))
    vcs = (Vc(route=(0, 1), connections=2, egress_delay=0.001),
           Vc(route=(0, 1), access_delay=0.003),
           Vc(route=(1,), connections=3, category="gfr", access_delay=0.001))
    return Network(ports=ports, vcs=vcs, vbr=(VbrSource(route=(0, 1), rate=0.5, on=0.01, off=0.02),),
                   tcp=TcpParams(variant="reno", wmax=80), duration=0.3)


@pytest.mark.parametrize("make", [
    lambda: lan(policy="tail", buf=300),
    lambda: lan(policy="fba", buf=300, variant="timeout-only"),
    lambda: lan(policy="epd", buf=300, gr=0.3, vbr=(VbrSource(route=(0,), on=0.01, off=0.01),)),
    _chain,
    lambda: _chain().with_(tcp=TcpParams(variant="sack", wmax=50, delayed_ack=True, rto="fixed")),
])
def test_conservation_of_cells_and_packets(make):
    net = make()
    (st, fs, vst, vfs, pst, pfs, gout, inflight), kin = run1(net, seed=3)
    upf = net.cells_per_frame
    # cells: every emitted cell is dropped, delivered, or still queued / on a link
    np.testing.assert_array_equal(vst[:, L.V_CSENT], vst[:, L.V_CDROP] + vst[:, L.V_CDELIV] + inflight)
    served = pst[:, L.PS_SERVED0:L.PS_SERVED0 + 3].sum()
    dropped = pst[:, L.PS_DROP0:L.PS_DROP0 + 3].sum()
    assert dropped == vst[:, L.V_CDROP].sum()
    nd = len(net.vcs)
    # segments: handed to segmentation = emitted (in cells) + still waiting
    np.testing.assert_array_equal(st[:, L.S_SEGSENT] * upf, st[:, L.S_CSENT] + st[:, L.S_SQCELLS])
    assert vst[:nd, L.V_CSENT].sum() == st[:, L.S_CSENT].sum()
    # packets: in-order deliveries <= frames reassembled <= frames sent
    assert (st[:, L.S_GOODALL] <= st[:, L.S_FDELIV]).all()
    assert (st[:, L.S_FDELIV] <= st[:, L.S_FSENT]).all()
    assert (st[:, L.S_GOODALL] == st[:, L.S_RCVNXT]).all()
    assert st[:, L.S_GOODALL].sum() > 0
    assert served >= vst[:, L.V_CDELIV].sum()


def test_multi_hop_traffic_reaches_destinations_through_delay_lines():
    net = _chain().with_(start_jitter=0.01)   # replications of a network need randomness
    res = simulate_network(net, replications=2, seed=4)
    assert all(g.mean > 0 for g in res.vc_goodput_bps)
    assert len(res.goodput_bps) == 6
    assert res.queue_max[0] > 0 and res.queue_max[1] > 0


def test_same_numbers_for_any_worker_count():
    net = _chain().with_(duration=0.1, start_jitter=0.01)
    a = simulate_network(net, replications=3, seed=9, workers=1)
    b = simulate_network(net, replications=3, seed=9, workers=2)
    assert a.efficiency == b.efficiency and a.counters == b.counters


@pytest.mark.parametrize("bad, name", [
    (lambda: Port(gr=1.5), "gr=1.5"),
    (lambda: Port(ubr_buffer=0), "ubr_buffer=0"),
    (lambda: Vc(route=(0, 0)), "route"),
    (lambda: Vc(feedback="instcap"), "feedback='instcap'"),
    (lambda: VbrSource(on=0.0), "on=0.0"),
    (lambda: TcpParams(variant="tahoe"), "variant='tahoe'"),
    (lambda: TcpParams(dupthresh=0), "dupthresh=0"),
    (lambda: Network(tcp=TcpParams(rto="fixed")), "rto='fixed'"),
    (lambda: Network(ports=(Port(),), vcs=(Vc(route=(1,)),)), "route"),
    (lambda: simulate_network(Network(ports=(Port(ubr_policy=DropPolicy("gfr")),)), 1), "threshold=None"),
    (lambda: simulate_network(Network(), 2), "replications=2 is invalid for network '': it has no randomness"),
])
def test_bad_input_names_the_parameter(bad, name):
    with pytest.raises(ValueError, match=name.replace("(", r"\(").replace(")", r"\)")):
        bad()
