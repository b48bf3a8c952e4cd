"""The single-bottleneck system of :mod:`tcpabr_model.sim` as a network configuration."""

from __future__ import annotations

from ..capacity import CapacityModel
from .scenario import Scenario
from .network import CELL_BYTES, CapacityProcess, DropPolicy, Network, Port, Vc

__all__ = ["from_sim_scenario"]


def from_sim_scenario(sc: Scenario) -> Network:
    """Express a :class:`tcpabr_model.sim.Scenario` as a :class:`Network`.

    One port (the bottleneck) with the scenario's capacity process (two-state, K-state model
    or trace; a model in the paper's unit gets ``time_unit = sc.time_unit``); one VC per
    connection (ABR with INSTCAP/EFFCAP/constant rate, or TCP alone at the host link
    rate), all propagation lumped on the ACK return path (``ack_delay`` = Delta_i, as
    the core paper and ``tcpabr_model.sim`` do).  The reference rate is the scenario's
    high rate on the wire (one cell per slot), so the slot is ``sc.slot_seconds``.
    Simulating it with the same seed gives the same counters as
    :func:`tcpabr_model.sim.simulate` (tested in ``tests/test_net_compat.py``).
    """
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc={sc!r} is invalid: must be a tcpabr_model.sim.Scenario")
    atm = sc.feedback != "none"
    upf = sc.cells_per_frame if atm else 1
    bufu = sc.buffer_packets * upf
    if sc.discard == "epd":
        thr = sc.epd_threshold_packets
        if thr is None:
            thr = sc.buffer_packets - 1 if sc.buffer_packets > 1 else 0.5
        pol = DropPolicy("epd", threshold=float(max(1, int(round(thr * upf)))))
    else:
        pol = DropPolicy("ppd")
    if sc.capacity is None:
        cap = CapacityProcess(tau=sc.tau, rate_ratio=sc.rate_ratio, mode=sc.capacity_mode, period=sc.period,
                              initial=sc.initial_state)
    elif isinstance(sc.capacity, CapacityModel) and sc.capacity.time_unit is None:
        # the paper's unit made explicit: one packet time at the high rate, in seconds
        m = sc.capacity
        cap = CapacityModel(m.levels, transition=m.transition, generator=m.generator, epoch=m.epoch,
                            time_unit=sc.time_unit, packet_bytes=m.packet_bytes)
    else:
        cap = sc.capacity     # a trace or a model in seconds: the port's rate is its peak
    # the port's rate relative to one cell per slot: 1 over ATM; for TCP alone one IP packet
    # per time unit (tcpabr_model.units.slot_bytes), the same pipe in packets
    rate = sc.slot_bytes / CELL_BYTES
    if atm:
        port = Port(rate=rate, abr_buffer=bufu, abr_policy=pol, capacity=cap, capacity_offset=sc.capacity_offset)
    else:
        port = Port(rate=rate, ubr_buffer=bufu, ubr_policy=pol, capacity=cap, capacity_offset=sc.capacity_offset)
    tcp = sc.tcp     # a TcpConfig is a TcpParams: one settings type for both kernels
    vcs = []
    for c in range(sc.n_connections):
        if atm:
            vcs.append(Vc(route=(0,), category="abr", feedback=sc.feedback, ack_delay=sc.rtt[c],
                          feedback_delay=sc.feedback_delay[c], m=sc.m[c], n=sc.n[c], share=sc.share[c],
                          initial_rate=sc.initial_rate))
        else:
            vcs.append(Vc(route=(0,), category="ubr", pcr=sc.host_rate_factor * rate, ack_delay=sc.rtt[c]))
    # the link rate is one cell per slot: slot_seconds round-trips bit for bit
    return Network(ports=(port,), vcs=tuple(vcs), tcp=tcp, link_rate_bps=CELL_BYTES * 8 / sc.slot_seconds,
                   payload_bytes=sc.payload_bytes, tcpip_header_bytes=sc.tcpip_header_bytes,
                   llc_snap_bytes=sc.llc_snap_bytes, aal5_trailer_bytes=sc.aal5_trailer_bytes, atm=atm,
                   interval=sc.interval, duration=sc.duration, warmup=sc.warmup, name="from_sim_scenario")
