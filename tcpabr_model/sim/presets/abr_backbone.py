"""Scenario definitions for the ABR/ERICA+ experiments of seed 003 (the slides' tables).

Source: Kalyanaraman, Jain, Fahmy, Goyal, Jiang and Kim, *Performance of TCP over ABR on
ATM Backbone and with Various VBR Traffic Patterns* (ATM Forum 96-1294 slides,
``../shared/seeds/003_1777ed5523e6f701.txt``).  Every case is an :class:`AbrBackboneCase`;
``provenance`` says, parameter by parameter, whether the slides state it ("stated: ...")
or it was chosen here ("CHOICE: ..."); ``slides`` holds the table row the case reproduces.

Topology (all cases): ``n_sources`` TCP connections, each on its own ABR VC, from an edge
source through switch 1, a backbone link to switch 2, and on to its destination::

    src_i --d1--> [switch 1 port -> backbone] --d2--> [switch 2] --d3--> dst_i

The bottleneck is switch 1's output port onto the backbone (ERICA+ runs there; VBR
background enters there).  With d1 = d2 = d3 the feedback delay from the bottleneck
(switch -> source -> switch) is 2 d1 and the round trip is 6 d1 = 3 x feedback delay,
which is exactly the slides' feedback-delay table (1 ms <-> RTT 3 ms, 5 <-> 15, 10 <-> 30)
and their 15 ms one-way delay for the backbone tables.

Units: rates in Mbit/s of 53-byte cells on the wire, times in seconds, buffers in cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..._validate import check_choice, check_int, check_real
from ..abr.source import AbrSourceParams, mbps_to_cells_per_second
from ..switch.erica import EricaParams

__all__ = ["AbrBackboneCase", "slides_source_params", "abr_presets", "get_abr_preset",
           "abr_preset_names", "RATE_ALLOCATIONS"]

RATE_ALLOCATIONS = ("erica", "instcap", "effcap")
# INSTCAP/EFFCAP measurement interval s as a fraction of the RTT (the core paper's
# s = 30 ms for Delta = 200 ms is 0.15 Delta); EFFCAP uses M : Delta and N : 8 Delta
EFFCAP_INTERVAL_FRACTION = 0.15

LINK_MBPS = 155.52
MSS_BYTES = 512
# 512 B payload + 40 B TCP/IP + 8 B LLC/SNAP + 8 B AAL5 trailer = 568 B -> 12 cells
CELLS_PER_SEGMENT = 12
WINDOW_SEGMENTS = 16 * 65536 // MSS_BYTES          # 16 x 64 kB = 2048 segments
WINDOW_CELLS = WINDOW_SEGMENTS * CELLS_PER_SEGMENT  # 24576 cells, as the slides state


def slides_source_params() -> AbrSourceParams:
    """The slides' ABR source parameters ("selected to maximize ACR").

    TBE = 512, CDF = 0.5, ICR = 10 Mbps, ADTF = 0.5 s, PCR = 155.52 Mbps, MCR = 0,
    RIF (AIR) = 1, Nrm = 32, Mrm = 2, RDF = 1/512; Trm is not stated (TM 4.0 default 100 ms).
    """
    return AbrSourceParams(pcr=mbps_to_cells_per_second(LINK_MBPS), mcr=0.0,
                           icr=mbps_to_cells_per_second(10.0), rif=1.0, rdf=1.0 / 512,
                           cdf=0.5, tbe=512, adtf=0.5, nrm=32, mrm=2, trm=0.1)


@dataclass(frozen=True)
class AbrBackboneCase:
    """One ABR backbone experiment (a row of a slides' table).

    Parameters
    ----------
    name : str
    table : str
        Which slides' table the case belongs to.
    n_sources : int
        TCP connections, one per ABR VC, >= 1.
    link_mbps : float
        Rate of every link (and of the sources' PCR), Mbit/s of cells, > 0.
    link_delay_s : float
        One-way propagation delay of each of the three links d1 = d2 = d3, seconds, > 0.
    source_buffer_cells : int
        Per-VC buffer at the edge (ABR source queue), cells, >= 1.
    vbr_duty, vbr_period_s : float
        VBR on/off background at the bottleneck: on for d x p, off for (1 - d) x p.
        ``vbr_duty = 0`` means no VBR.
    vbr_rate_mbps : float
        VBR cell rate while on, Mbit/s, in [0, link_mbps].
    rate_allocation : {'erica', 'instcap', 'effcap'}
        Rate computation at the bottleneck port: ERICA/ERICA+ (per ``erica``) or the seed
        004 feedback of the network simulator (issue 5 comparison).
    erica : EricaParams
    source : AbrSourceParams
    duration_s : float
        Simulated time, seconds.
    tcp : dict
        TCP settings (``mss_bytes``, ``window_segments``, ``granularity_s``,
        ``delayed_ack``, ``variant``, ``rto_min_s``, ``rto_initial_s``).
    switch_buffer_cells : int
        ABR buffer at the bottleneck port (large: the slides measure the queue, no loss).
    slides : dict
        The table row's published numbers (for the findings; never used to tune).
    provenance : dict
        Parameter name -> "stated: ..." or "CHOICE: ...".
    """

    name: str
    table: str
    n_sources: int
    link_mbps: float
    link_delay_s: float
    source_buffer_cells: int
    vbr_duty: float
    vbr_period_s: float
    vbr_rate_mbps: float
    rate_allocation: str
    erica: EricaParams
    source: AbrSourceParams
    duration_s: float
    tcp: dict = field(default_factory=dict)
    switch_buffer_cells: int = 10**6
    slides: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)

    def __post_init__(self):
        check_int("n_sources", self.n_sources, 1, 1000)
        check_real("link_mbps", self.link_mbps, 0.0, low_open=True)
        check_real("link_delay_s", self.link_delay_s, 0.0, low_open=True)
        check_int("source_buffer_cells", self.source_buffer_cells, 1)
        check_real("vbr_duty", self.vbr_duty, 0.0, 1.0)
        check_real("vbr_period_s", self.vbr_period_s, 0.0, low_open=True)
        check_real("vbr_rate_mbps", self.vbr_rate_mbps, 0.0, self.link_mbps)
        check_choice("rate_allocation", self.rate_allocation, RATE_ALLOCATIONS)
        check_real("duration_s", self.duration_s, 0.0, low_open=True)
        check_int("switch_buffer_cells", self.switch_buffer_cells, 1)
        if not isinstance(self.erica, EricaParams):
            raise ValueError(f"erica={self.erica!r} is invalid: must be an EricaParams")
        if not isinstance(self.source, AbrSourceParams):
            raise ValueError(f"source={self.source!r} is invalid: must be an AbrSourceParams")

    @property
    def feedback_delay_s(self) -> float:
        """Bottleneck -> source -> bottleneck propagation delay, 2 d1, seconds."""
        return 2.0 * self.link_delay_s

    @property
    def rtt_s(self) -> float:
        """Round-trip propagation delay source -> destination -> source, 6 d1, seconds."""
        return 6.0 * self.link_delay_s

    @property
    def link_cells_per_s(self) -> float:
        return mbps_to_cells_per_second(self.link_mbps)

    @property
    def rtt_cells(self) -> float:
        """Cells the link carries in one RTT (the slides' "x RTT" unit for queues)."""
        return self.rtt_s * self.link_cells_per_s

    def to_network(self, duration_s: float | None = None, warmup_s: float = 0.0):
        """The case as a :class:`tcpabr_model.sim.Network` (one switch port, see the module
        docstring; switch 2 is never a bottleneck and is folded into the egress delay).

        Parameters
        ----------
        duration_s : float or None
            Measured time, seconds (default the case's ``duration_s``).
        warmup_s : float, optional(default=0.0)
        """
        from ..feedback import m_from_delta, n_from_k
        from ..network import DropPolicy, Network, Port, TcpParams, VbrSource, Vc

        dur = self.duration_s if duration_s is None else check_real("duration_s", duration_s, 0.0, low_open=True)
        d = self.link_delay_s
        n = self.n_sources
        s_meas = EFFCAP_INTERVAL_FRACTION * self.rtt_s
        port = Port(rate=1.0, link_delay=0.0, abr_buffer=self.switch_buffer_cells,
                    abr_policy=DropPolicy("tail"), vbr_buffer=1 << 17,
                    erica=self.erica if self.rate_allocation == "erica" else None,
                    feedback_net_of_vbr=self.rate_allocation != "erica",
                    name="switch 1 -> backbone")
        common = dict(route=(0,), category="abr", access_delay=d, egress_delay=2.0 * d,
                      source_buffer=self.source_buffer_cells, abr=self.source)
        if self.rate_allocation == "erica":
            vcs = tuple(Vc(feedback="rm", name=f"tcp{i}", **common) for i in range(n))
        else:
            m = m_from_delta(self.rtt_s, s_meas) if self.rate_allocation == "effcap" else 1
            nn = n_from_k(8, self.rtt_s, s_meas) if self.rate_allocation == "effcap" else 1
            vcs = tuple(Vc(feedback=self.rate_allocation, feedback_delay=self.feedback_delay_s,
                           m=m, n=max(nn, 1), share=1.0 / n, initial_rate=self.source.icr / self.link_cells_per_s,
                           name=f"tcp{i}", **common) for i in range(n))
        vbr = ()
        if self.vbr_duty > 0.0 and self.vbr_rate_mbps > 0.0:
            on = self.vbr_duty * self.vbr_period_s
            vbr = (VbrSource(route=(0,), rate=self.vbr_rate_mbps / self.link_mbps, on=on,
                             off=self.vbr_period_s - on, name="vbr"),)
        t = self.tcp
        tcp = TcpParams(variant=t["variant"], wmax=t["window_segments"], rto="estimator",
                        granularity=t["granularity_s"], rto_min=t["rto_min_s"],
                        rto_initial=t["rto_initial_s"], delayed_ack=t["delayed_ack"])
        return Network(ports=(port,), vcs=vcs, vbr=vbr, tcp=tcp, link_rate_bps=self.link_mbps * 1e6,
                       payload_bytes=t["mss_bytes"], interval=s_meas, duration=dur, warmup=warmup_s,
                       bottleneck=0, name=self.name)

    def with_rate_allocation(self, policy: str) -> "AbrBackboneCase":
        """The same case with another rate computation at the bottleneck (issue item 5)."""
        check_choice("rate_allocation", policy, RATE_ALLOCATIONS)
        prov = dict(self.provenance)
        prov["rate_allocation"] = ("stated: ERICA+" if policy == "erica" else
                                   f"CHOICE: {policy} in place of ERICA+ (issue 9 item 5 comparison)")
        return replace(self, name=f"{self.name}_{policy}" if policy != self.rate_allocation else self.name,
                       rate_allocation=policy, provenance=prov)


_TCP = dict(mss_bytes=MSS_BYTES, window_segments=WINDOW_SEGMENTS, granularity_s=0.1,
            delayed_ack=False, variant="reno", rto_min_s=0.2, rto_initial_s=3.0)

_BASE_PROVENANCE = {
    "source": "stated: TBE 512, CDF 0.5, ICR 10 Mbps, ADTF 0.5 s, PCR 155.52 Mbps, MCR 0, "
              "RIF 1, Nrm 32, Mrm 2, RDF 1/512; CHOICE: Trm = 100 ms (TM 4.0 default, unstated)",
    "link_mbps": "stated: 155.52 Mbps; CHOICE: the full 155.52 Mbps carries cells "
                 "(SONET framing overhead ignored), 366,792 cells/s",
    "link_delay_s": "stated: 15 ms one-way (backbone tables), RTT = 3 x feedback delay; "
                    "CHOICE: three equal links of 5 ms, bottleneck at the first switch",
    "n_sources": "CHOICE: 15 TCP sources (the slides do not give the number)",
    "tcp.mss_bytes": "stated: 512 bytes",
    "tcp.window_segments": "stated: 16 x 64 kB = 24576 cells (2048 segments of 12 cells)",
    "tcp.granularity_s": "stated: 100 ms",
    "tcp.delayed_ack": "stated: no delayed-ACK timer",
    "tcp.variant": "CHOICE: Reno (the slides say fast retransmit has no impact without loss)",
    "tcp.rto_min_s": "CHOICE: 2 timer ticks (0.2 s)",
    "tcp.rto_initial_s": "CHOICE: 3 s (RFC 1122 initial RTO)",
    "tcp.processing": "stated: no TCP processing time; infinite (bulk) application",
    "erica": "stated: ERICA+; CHOICE: the basic ERICA+ without the averaging enhancements "
             "(the slides present An/Az averaging as the fix for the divergent cases of the "
             "VBR and feedback-delay tables, so those tables ran without it), averaging "
             "interval (100 cells, 1 ms), T0 = 0.5 ms, a = 1.15, b = 1.05, QDLF = 0.5, "
             "MaxAllocPrevious on (delta = 0.1), ERICA's 'avoid sudden increase' step on (a VC below "
             "the fair share is raised to the fair share only)",
    "switch_buffer_cells": "CHOICE: 10^6 cells, i.e. no switch loss (the slides report the "
                           "maximum queue, not losses)",
    "reverse_path": "CHOICE: ACKs and backward RM cells return on an uncongested path with "
                    "the fixed delays d3 + d2 + d1; ERICA stamps the BRM when it passes "
                    "switch 1 (d3 + d2 after the destination)",
    "duration_s": "CHOICE: 10 s of simulated time (not stated)",
    "switch_2": "CHOICE: switch 2 is not simulated (same rate as the backbone, never a "
                "bottleneck); its link delays are the VC's egress delay 2 d",
    "instcap_effcap": "CHOICE (item 5 only): share 1/N of the port capacity per VC, "
                      "measurement interval s = 0.15 RTT, EFFCAP M : RTT, N : 8 RTT (core "
                      "paper Sec. VI notation), feedback delay = 2 d; INSTCAP/EFFCAP measure "
                      "the capacity left by VBR (link minus VBR cells served per interval, "
                      "Port.feedback_net_of_vbr)",
}


def _case(name, table, *, buffer_cells=100_000, duty=0.0, period=0.1, vbr_mbps=0.0,
          delay=5e-3, erica=None, slides=None, extra_prov=None, duration=10.0):
    prov = dict(_BASE_PROVENANCE)
    if extra_prov:
        prov.update(extra_prov)
    return AbrBackboneCase(
        name=name, table=table, n_sources=15, link_mbps=LINK_MBPS, link_delay_s=delay,
        source_buffer_cells=buffer_cells, vbr_duty=duty, vbr_period_s=period,
        vbr_rate_mbps=vbr_mbps, rate_allocation="erica",
        erica=erica if erica is not None else BASIC_ERICA_PLUS,
        source=slides_source_params(), duration_s=duration, tcp=dict(_TCP),
        slides=slides or {}, provenance=prov)


_VBR_PROV = {
    "vbr_rate_mbps": "CHOICE: 124.416 Mbps (80 % of the link) while on; the slides give "
                     "only duty cycle and period",
    "vbr_duty": "stated (table): 0.95, 0.80, 0.70 (the bullet list says 0.9, 0.8, 0.7; the "
                "table's values are used)",
    "source_buffer_cells": "CHOICE: 100000 cells per VC (> one window: no edge loss)",
}
VBR_MBPS = 0.8 * LINK_MBPS
BASIC_ERICA_PLUS = EricaParams(interval_cells=100, interval_seconds=1e-3, queue_control=True,
                               average_sources=False, average_overload=False)


def _build():
    out = {}
    t1 = "TCP over ABR on ATM backbone with no VBR"
    rows = {100: (">100 (overflow)", 8624, 0.78, 73.27), 1000: (">1000 (overflow)", 17171, 1.56, 83.79),
            10000: (">10000 (overflow)", 17171, 1.56, 95.48), 100000: (23901, 17171, 1.56, 110.90)}
    for buf, (srcq, swq, swq_rtt, thr) in rows.items():
        name = f"abr_backbone_novbr_buf{buf}"
        out[name] = _case(name, t1, buffer_cells=buf,
                          slides=dict(max_source_q_cells=srcq, max_switch_q_cells=swq,
                                      max_switch_q_rtt=swq_rtt, throughput_mbps=thr),
                          extra_prov={"source_buffer_cells": f"stated: {buf} cells per VC"})
    t2 = "Effect of VBR on-off times"
    vrows = [(0.95, 100, 2588, 0.23), (0.80, 100, 5217, 0.47), (0.70, 100, 5688, 0.52),
             (0.95, 10, 2709, 0.25), (0.80, 10, None, None), (0.70, 10, None, None),
             (0.95, 1, 2589, 0.23), (0.80, 1, 4077, 0.37), (0.70, 1, 2928, 0.26)]
    for i, (d, p, q, qr) in enumerate(vrows, start=1):
        name = f"abr_vbr_d{round(d * 100):03d}_p{p}ms"
        out[name] = _case(name, t2, duty=d, period=p * 1e-3, vbr_mbps=VBR_MBPS,
                          slides=dict(row=i, max_switch_q_cells=q, max_switch_q_rtt=qr,
                                      diverges=q is None),
                          extra_prov=dict(_VBR_PROV, vbr_period_s=f"stated: {p} ms"))
    t3 = "Effect of feedback delay"
    for fd, rtt, q, qr in ((1, 3, 4176, 0.4), (5, 15, None, None), (10, 30, None, None)):
        name = f"abr_fbdelay_{fd}ms"
        out[name] = _case(name, t3, duty=0.8, period=10e-3, vbr_mbps=VBR_MBPS, delay=fd * 1e-3 / 2,
                          slides=dict(feedback_delay_ms=fd, rtt_ms=rtt, max_switch_q_cells=q,
                                      max_switch_q_rtt=qr, diverges=q is None),
                          extra_prov=dict(_VBR_PROV, link_delay_s=(
                              f"stated: feedback delay {fd} ms, RTT {rtt} ms; CHOICE: three "
                              f"equal links of {fd / 2} ms")))
    t4 = "Effect of switch scheme (ERICA+ averaging)"
    for (n, tms, avgz, q) in ((100, 1, True, 5223), (500, 5, False, 5637)):
        name = f"abr_erica_avg_{n}c_{tms}ms" + ("_an_az" if avgz else "_an")
        er = EricaParams(interval_cells=n, interval_seconds=tms * 1e-3, average_sources=True,
                         source_decay=0.9, average_overload=avgz, overload_weight=0.2)
        out[name] = _case(name, t4, duty=0.7, period=20e-3, vbr_mbps=VBR_MBPS, erica=er,
                          slides=dict(max_switch_q_cells=q, diverges=False),
                          extra_prov=dict(_VBR_PROV, erica=(
                              f"stated: interval ({n} cells, {tms} ms), An = 0.9, Az = 0.2 "
                              f"{'on' if avgz else 'off'}; CHOICE: T0 = 0.5 ms, a = 1.15, "
                              "b = 1.05, QDLF = 0.5, MaxAllocPrevious on, 'avoid sudden "
                              "increase' step on")))
    # control cases (not rows of the slides): the enhancements switched off / on
    tc = "ERICA+ enhancements, control cases (not in the slides)"
    out["abr_erica_avg_off_d070_p20ms"] = _case(
        "abr_erica_avg_off_d070_p20ms", tc, duty=0.7, period=20e-3, vbr_mbps=VBR_MBPS,
        extra_prov=dict(_VBR_PROV, erica="CHOICE: basic ERICA+ (no An/Az averaging) on the switch-scheme "
                                         "scenario, to show what the averaging changes"))
    out["abr_vbr_d080_p10ms_an_az"] = _case(
        "abr_vbr_d080_p10ms_an_az", tc, duty=0.8, period=10e-3, vbr_mbps=VBR_MBPS, erica=EricaParams(),
        extra_prov=dict(_VBR_PROV, erica="CHOICE: ERICA+ with An = 0.9 and Az = 0.2 (100 cells, 1 ms) on "
                                         "the divergent VBR row 5, to test 'all cases we studied have small "
                                         "bounded queues'"))
    base = out["abr_backbone_novbr_buf100000"]
    for pol in RATE_ALLOCATIONS:
        c = base.with_rate_allocation(pol)
        name = f"abr_backbone_compare_{pol}"
        out[name] = replace(c, name=name, table="ERICA+ vs INSTCAP vs EFFCAP (issue 9 item 5)",
                            slides={})
    return out


_PRESETS = _build()


def abr_preset_names() -> list[str]:
    """Names of the ABR presets, in table order."""
    return list(_PRESETS)


def abr_presets() -> dict[str, AbrBackboneCase]:
    """All ABR presets by name (a new dict; the cases are immutable)."""
    return dict(_PRESETS)


def get_abr_preset(name: str) -> AbrBackboneCase:
    """The preset called ``name``; ``ValueError`` naming it if unknown."""
    if name not in _PRESETS:
        raise ValueError(f"preset={name!r} is invalid: must be one of {', '.join(_PRESETS)}")
    return _PRESETS[name]
