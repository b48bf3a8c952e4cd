"""Validated description of a network: ports, VCs, VBR sources, TCP and drop policies.

Units: times in seconds, rates as fractions of the network's reference link rate
(``Network.link_rate_bps``, the ATM cell rate of a rate-1 link), buffers in cells (in IP
packets when ``Network.atm`` is False, i.e. TCP alone).  The simulator's slot is one
53-byte cell time at the reference rate.  See ``docs/network.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from .. import units as _units
from .._validate import check_choice, check_int, check_real
from .abr.source import AbrSourceParams
from .switch.erica import EricaParams
from ..units import CELL_BYTES
from .tcp.variants import VARIANTS as TCP_VARIANTS, canonical_variant

__all__ = ["TcpParams", "DropPolicy", "CapacityProcess", "Port", "Vc", "VbrSource", "Network",
           "TCP_VARIANTS", "POLICIES", "CATEGORIES", "FEEDBACKS"]

POLICIES = ("tail", "ppd", "epd", "sd", "fba", "gfr", "threshold")
CATEGORIES = ("ubr", "gfr", "abr")
FEEDBACKS = ("none", "instcap", "effcap", "constant", "rm")


def _s(obj, name, value):
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class TcpParams:
    """TCP settings of every connection, for both kernels (:class:`TcpConfig` is the same type
    with the core paper's defaults).

    Parameters
    ----------
    variant : {'timeout-only', 'reno', 'newreno', 'sack', 'newreno-steady'}, optional(default='sack')
        'timeout-only' is seed 000's "Vanilla" TCP and the core paper's model (slow start
        and congestion avoidance, losses recovered by the timeout); 'reno' adds fast
        retransmit and recovery; 'newreno' is RFC 6582; 'sack' selective
        acknowledgements (see :mod:`tcpabr_model.sim.tcp.variants`).
    wmax : int, optional(default=128)
        Receiver window in segments (cwnd is clamped to it).
    rto : {'fixed', 'estimator'}, optional(default='estimator')
        'fixed': RTO = ``rto_rtt_factor`` x the connection's round-trip propagation
        delay; 'estimator': RFC 6298 with timer granularity ``granularity``.
    rto_rtt_factor, granularity, rto_min, rto_max, rto_initial : float
        Seconds (factor dimensionless); defaults 2, 0.1, 0.2, 60, 1.0 (granularity 100 ms:
        seed 000 Sec. 5.1 "2 to 3 ticks of 100 ms each"; seed 002 "granularity=100").
    delayed_ack : bool, optional(default=False)
        Acknowledge every second in-order segment or after ``delack_timeout``.
    delack_timeout : float, optional(default=0.2)
    dupthresh : int, optional(default=3)
        Duplicate ACKs that trigger fast retransmit (Reno, SACK).
    initial_window : int, optional(default=1)
        Initial congestion window, segments.
    initial_ssthresh : int or None, optional(default=None)
        Segments; None means ``wmax``.
    """

    variant: str = "sack"
    wmax: int = 128
    rto: str = "estimator"
    rto_rtt_factor: float = 2.0
    granularity: float = 0.1
    rto_min: float = 0.2
    rto_max: float = 60.0
    rto_initial: float = 1.0
    delayed_ack: bool = False
    delack_timeout: float = 0.2
    dupthresh: int = 3
    initial_window: int = 1
    initial_ssthresh: int | None = None

    def __post_init__(self):
        _s(self, "variant", canonical_variant(self.variant))
        _s(self, "wmax", check_int("wmax", self.wmax, 1, 10**6))
        check_choice("rto", self.rto, ("fixed", "estimator"))
        _s(self, "rto_rtt_factor", check_real("rto_rtt_factor", self.rto_rtt_factor, 0.0, 1000.0, low_open=True))
        _s(self, "granularity", check_real("granularity", self.granularity, 0.0, 10.0, low_open=True))
        _s(self, "rto_min", check_real("rto_min", self.rto_min, 0.0, 1e4))
        _s(self, "rto_max", check_real("rto_max", self.rto_max, self.rto_min, 1e5))
        _s(self, "rto_initial", check_real("rto_initial", self.rto_initial, 0.0, 1e4, low_open=True))
        if not isinstance(self.delayed_ack, bool):
            raise ValueError(f"delayed_ack={self.delayed_ack!r} is invalid: must be True or False")
        _s(self, "delack_timeout", check_real("delack_timeout", self.delack_timeout, 0.0, 10.0, low_open=True))
        _s(self, "dupthresh", check_int("dupthresh", self.dupthresh, 1, 1000))
        _s(self, "initial_window", check_int("initial_window", self.initial_window, 1, 10**6))
        if self.initial_ssthresh is not None:
            _s(self, "initial_ssthresh", check_int("initial_ssthresh", self.initial_ssthresh, 2, 10**7))


@dataclass(frozen=True)
class DropPolicy:
    """Frame admission policy of a class queue (see :mod:`tcpabr_model.sim.switch.drop_policies`).

    Parameters
    ----------
    kind : {'tail', 'ppd', 'epd', 'sd', 'fba', 'gfr', 'threshold'}, optional(default='ppd')
        'tail': plain UBR (cells dropped on overflow only); 'ppd': partial packet discard;
        'epd': early packet discard at ``threshold`` R; 'sd' Selective Drop and 'fba'
        Fair Buffer Allocation (per-VC accounting, threshold R and parameter Z); 'gfr':
        seed 002 Section 4 (R, Z and each VC's R_i, W_i); 'threshold': seed 002 Section 3
        (one frame dropped per upward crossing of the VC's R_i).
    threshold : float or None, optional
        R in cells, in [0, K].  Default: 'epd' K - 1 frame of the largest VC (seed 001's
        EPD_th = K - b MTU with b = 1); 'sd' and 'fba' 0.9 K and 0.5 K; 'gfr' 0.9 K
        (**CHOICE**, see docs/network.md); unused by 'tail', 'ppd', 'threshold'.
    z : float or None, optional
        Z: 'sd' default 0.8, 'fba' default 0.8, 'gfr' default 1.5 (seed 002 Sec. 4); must be
        > 1 for 'gfr' and > 0 otherwise.
    """

    kind: str = "ppd"
    threshold: float | None = None
    z: float | None = None

    def __post_init__(self):
        check_choice("kind", self.kind, POLICIES)
        if self.threshold is not None:
            _s(self, "threshold", check_real("threshold", self.threshold, 0.0))
        if self.z is not None:
            if self.kind == "gfr":
                _s(self, "z", check_real("z", self.z, 1.0, 1e6, low_open=True))
            else:
                _s(self, "z", check_real("z", self.z, 0.0, 1e6, low_open=True))

    def resolved(self, buffer_cells: int, frame_cells: int) -> tuple[float, float]:
        """(R, Z) with defaults filled in, for a buffer of ``buffer_cells``."""
        k = float(buffer_cells)
        r = self.threshold
        if r is None:
            r = {"epd": max(k - frame_cells, 0.5), "sd": 0.9 * k, "fba": 0.5 * k, "gfr": 0.9 * k}.get(self.kind, k)
        if r > k:
            raise ValueError(f"threshold={r!r} is invalid: must be in [0, {buffer_cells}] (the buffer)")
        z = self.z if self.z is not None else {"gfr": 1.5}.get(self.kind, 0.8)
        return float(r), float(z)


@dataclass(frozen=True)
class CapacityProcess:
    """Two-state Markov-modulated available capacity of a port (core paper, Sec. II).

    ``tau`` mean sojourn per state (s), ``rate_ratio`` low / high, ``mode`` 'continuous'
    or 'embedded' (changes only at multiples of ``period``), ``initial`` state.
    """

    tau: float = 4.0
    rate_ratio: float = 0.5
    mode: str = "continuous"
    period: float | None = None
    initial: str = "stationary"

    def __post_init__(self):
        _s(self, "tau", check_real("tau", self.tau, 0.0, low_open=True))
        _s(self, "rate_ratio", check_real("rate_ratio", self.rate_ratio, 0.0, 1.0, low_open=True))
        check_choice("mode", self.mode, ("continuous", "embedded"))
        check_choice("initial", self.initial, ("stationary", "high", "low"))
        if self.period is not None:
            _s(self, "period", check_real("period", self.period, 0.0, low_open=True))
        if self.mode == "embedded" and self.period is None:
            raise ValueError("period=None is invalid: must be given for mode='embedded'")


@dataclass(frozen=True)
class Port:
    """A switch output port and the link it drives.

    Parameters
    ----------
    rate : float, optional(default=1.0)
        Link rate / reference rate.
    link_delay : float, optional(default=0.0)
        Propagation delay of the outgoing link to the next switch, s (used by VCs whose
        route continues to another port).
    ubr_buffer, abr_buffer, vbr_buffer : int
        Class queue sizes in cells (packets for TCP alone); defaults 1000, 1000, 2**17.
    ubr_policy, abr_policy : DropPolicy
        Drop policies of the UBR/GFR and ABR queues (default PPD); the VBR queue drops
        cells on overflow (tail).
    gr : float, optional(default=0.0)
        Guaranteed rate of the UBR class, fraction of the link in [0, 1] (seed 000 Sec. 3).
    capacity : CapacityProcess, CapacityModel, tcpabr_model.capacity.Trace or None
        Available capacity (None: constant ``rate``): the two-state process, a K-state
        chain (its largest level is the port's ``rate``; ``time_unit`` in seconds is
        required), or a measured trace replayed with its period (its busiest 1-ms bin is
        the port's ``rate``: the trace gives the shape, ``rate`` the scale).
    capacity_offset : float, optional
        With a trace: seconds into the trace at time 0 (None: a whole ms drawn uniformly
        in the period, anew in every replication).
    erica : EricaParams or None, optional(default=None)
        ERICA/ERICA+ explicit-rate allocation at this port: it stamps the ER of backward
        RM cells of the ABR VCs (``feedback='rm'``) crossing it (``docs/abr_erica.md``).
    feedback_net_of_vbr : bool, optional(default=False)
        For the INSTCAP/EFFCAP feedback of this port (``Vc(feedback='instcap'|'effcap')``):
        measure the capacity *left by VBR* in each interval (the port's capacity minus the
        VBR cells it served, in the same unit) instead of the port's capacity.  With VBR
        background this is the capacity the ABR class can use, what an INSTCAP switch
        would feed back; without VBR both are the same.
    name : str, optional
    """

    rate: float = 1.0
    link_delay: float = 0.0
    ubr_buffer: int = 1000
    ubr_policy: DropPolicy = field(default_factory=DropPolicy)
    abr_buffer: int = 1000
    abr_policy: DropPolicy = field(default_factory=DropPolicy)
    vbr_buffer: int = 1 << 17
    gr: float = 0.0
    capacity: CapacityProcess | None = None
    name: str = ""
    erica: EricaParams | None = None
    feedback_net_of_vbr: bool = False
    capacity_offset: float | None = None

    def __post_init__(self):
        if not isinstance(self.feedback_net_of_vbr, bool):
            raise ValueError(f"feedback_net_of_vbr={self.feedback_net_of_vbr!r} is invalid: must be True or False")
        if self.erica is not None and not isinstance(self.erica, EricaParams):
            raise ValueError(f"erica={self.erica!r} is invalid: must be an EricaParams or None")
        _s(self, "rate", check_real("rate", self.rate, 0.0, 100.0, low_open=True))
        _s(self, "link_delay", check_real("link_delay", self.link_delay, 0.0, 100.0))
        _s(self, "ubr_buffer", check_int("ubr_buffer", self.ubr_buffer, 1, 1 << 26))
        _s(self, "abr_buffer", check_int("abr_buffer", self.abr_buffer, 1, 1 << 26))
        _s(self, "vbr_buffer", check_int("vbr_buffer", self.vbr_buffer, 1, 1 << 26))
        _s(self, "gr", check_real("gr", self.gr, 0.0, 1.0))
        for nm in ("ubr_policy", "abr_policy"):
            if not isinstance(getattr(self, nm), DropPolicy):
                raise ValueError(f"{nm}={getattr(self, nm)!r} is invalid: must be a DropPolicy")
        from ..capacity import CapacityModel, Trace as LinkTrace

        cap = self.capacity
        if cap is not None and not isinstance(cap, (CapacityProcess, CapacityModel, LinkTrace)):
            raise ValueError(f"capacity={cap!r} is invalid: must be a CapacityProcess, a CapacityModel, a "
                             "tcpabr_model.capacity.Trace or None")
        if isinstance(cap, CapacityModel) and cap.time_unit is None:
            raise ValueError("capacity.time_unit=None is invalid for a Port: the model's time unit must be "
                             "given in seconds")
        if self.capacity_offset is not None:
            if not isinstance(cap, LinkTrace):
                raise ValueError(f"capacity_offset={self.capacity_offset!r} is invalid: only used with a trace")
            _s(self, "capacity_offset", check_real("capacity_offset", self.capacity_offset, 0.0, 1e8))

    @property
    def capacity_is_random(self) -> bool:
        """True when the port's capacity differs between replications: the two-state process, a
        chain of more than one level, or a trace of more than one level at a random offset."""
        from ..capacity import CapacityModel

        cap = self.capacity
        if cap is None:
            return False
        if isinstance(cap, CapacityProcess):
            return True
        if isinstance(cap, CapacityModel):
            return cap.n_levels > 1
        from .capacity import trace_levels

        return self.capacity_offset is None and trace_levels(cap)[1].size > 1


@dataclass(frozen=True)
class Vc:
    """A virtual circuit carrying ``connections`` TCP connections (merged without
    interleaving frames, seed 002 Fig. 7).

    Parameters
    ----------
    route : tuple of int
        Port indices, in order (each port at most once).
    category : {'ubr', 'gfr', 'abr'}, optional(default='ubr')
        'ubr' and 'gfr' use the port's UBR queue; 'abr' its ABR queue.
    connections : int, optional(default=1)
    pcr : float, optional(default=1.0)
        Source rate (fraction of the reference rate) when not following feedback: the
        UBR PCR, or the host link for TCP alone.
    access_delay, egress_delay : float, optional(default=0.0)
        Propagation delays source -> first port and last port -> destination, s.
    ack_delay : float or None, optional
        Return delay of ACKs (and their propagation) from the destination to the source, s;
        default the forward propagation delay (symmetric, uncongested reverse path).
    feedback : {'none', 'instcap', 'effcap', 'constant'}, optional(default='none')
        ABR source rule: 'instcap'/'effcap' follow the rate allocation of
        ``feedback_port`` (eq. 28 with ``m``, ``n``), 'constant' holds ``initial_rate``.
    feedback_port : int or None
        Default: the first port of the route.
    feedback_delay : float or None
        Default: the VC's round-trip propagation delay.
    m, n : int, optional(default=1)
    share : float, optional(default=1.0)
    initial_rate : float, optional(default=1.0)
    mcr : float, optional(default=0.0)
        Minimum cell rate of an INSTCAP/EFFCAP source (TM 4.0), a fraction of the feedback
        port's rate (the unit of ``initial_rate``) in [0, 1]: ACR = max(fed-back value x
        ``share``, ``mcr``) at all times, the initial rate included.  0 (TM 4.0's default)
        is the paper's source, ACR = fed-back value x share.  A ``feedback='rm'`` source
        takes its MCR from ``abr`` (cells/s) instead.
    threshold, weight : float or None
        R_i (cells) and W_i of the GFR / threshold policies (required there).
    tagged : bool, optional(default=False)
        All data cells tagged (CLP = 1).
    name : str, optional
    abr : AbrSourceParams or None
        TM 4.0 source parameters of an ABR VC with ``feedback='rm'`` (required there):
        RM cells every Nrm cells, ACR from the ER of backward RM cells
        (``docs/abr_erica.md``).
    source_buffer : int or None
        Edge (source) buffer of the VC in cells; whole segments that do not fit are
        dropped there and counted (None: unlimited).  Only for ``feedback='rm'`` VCs.
    """

    route: tuple = (0,)
    category: str = "ubr"
    connections: int = 1
    pcr: float = 1.0
    access_delay: float = 0.0
    egress_delay: float = 0.0
    ack_delay: float | None = None
    feedback: str = "none"
    feedback_port: int | None = None
    feedback_delay: float | None = None
    m: int = 1
    n: int = 1
    share: float = 1.0
    initial_rate: float = 1.0
    mcr: float = 0.0
    threshold: float | None = None
    weight: float | None = None
    tagged: bool = False
    name: str = ""
    abr: AbrSourceParams | None = None
    source_buffer: int | None = None

    def __post_init__(self):
        if self.feedback == "rm" and not isinstance(self.abr, AbrSourceParams):
            raise ValueError(f"abr={self.abr!r} is invalid: feedback='rm' needs an AbrSourceParams")
        if self.source_buffer is not None:
            _s(self, "source_buffer", check_int("source_buffer", self.source_buffer, 1, 1 << 40))
        r = tuple(self.route) if isinstance(self.route, (list, tuple)) else (self.route,)
        if len(r) == 0:
            raise ValueError("route=() is invalid: must name at least one port")
        r = tuple(check_int(f"route[{i}]", x, 0) for i, x in enumerate(r))
        if len(set(r)) != len(r):
            raise ValueError(f"route={r!r} is invalid: a port may appear only once")
        _s(self, "route", r)
        check_choice("category", self.category, CATEGORIES)
        _s(self, "connections", check_int("connections", self.connections, 1, 10000))
        _s(self, "pcr", check_real("pcr", self.pcr, 0.0, 1e4, low_open=True))
        _s(self, "access_delay", check_real("access_delay", self.access_delay, 0.0, 100.0))
        _s(self, "egress_delay", check_real("egress_delay", self.egress_delay, 0.0, 100.0))
        if self.ack_delay is not None:
            _s(self, "ack_delay", check_real("ack_delay", self.ack_delay, 0.0, 100.0))
        check_choice("feedback", self.feedback, FEEDBACKS)
        if self.feedback != "none" and self.category != "abr":
            raise ValueError(f"feedback={self.feedback!r} is invalid: only an 'abr' VC follows feedback")
        if self.feedback_port is not None:
            _s(self, "feedback_port", check_int("feedback_port", self.feedback_port, 0))
        if self.feedback_delay is not None:
            _s(self, "feedback_delay", check_real("feedback_delay", self.feedback_delay, 0.0, 100.0))
        _s(self, "m", check_int("m", self.m, 1, 10**6))
        _s(self, "n", check_int("n", self.n, 1, 10**6))
        _s(self, "share", check_real("share", self.share, 0.0, 1.0, low_open=True))
        _s(self, "initial_rate", check_real("initial_rate", self.initial_rate, 0.0, 1.0, low_open=True))
        _s(self, "mcr", check_real("mcr", self.mcr, 0.0, 1.0))
        if self.mcr > 0 and self.feedback not in ("instcap", "effcap"):
            rm = "; a feedback='rm' source takes its MCR from abr=AbrSourceParams(mcr=...), cells/s"
            raise ValueError(f"mcr={self.mcr!r} is invalid with feedback={self.feedback!r}: this minimum cell rate "
                             f"applies to INSTCAP/EFFCAP sources only{rm if self.feedback == 'rm' else ''}")
        if self.threshold is not None:
            _s(self, "threshold", check_real("threshold", self.threshold, 0.0, low_open=True))
        if self.weight is not None:
            _s(self, "weight", check_real("weight", self.weight, 0.0, 1e6))
        if not isinstance(self.tagged, bool):
            raise ValueError(f"tagged={self.tagged!r} is invalid: must be True or False")


@dataclass(frozen=True)
class VbrSource:
    """An on/off VBR (or CBR with ``off=0``) source with strict priority over ABR and UBR.

    ``rate`` during the on period (fraction of the reference rate), ``on`` / ``off``
    periods and ``phase`` (first switch-on) in seconds; ``route`` like :class:`Vc`.
    Seed 000: on = off = 300, 100 or 50 ms at 100 % of the link.
    """

    route: tuple = (0,)
    rate: float = 1.0
    on: float = 0.3
    off: float = 0.3
    phase: float = 0.0
    name: str = ""

    def __post_init__(self):
        r = tuple(self.route) if isinstance(self.route, (list, tuple)) else (self.route,)
        if len(r) == 0 or len(set(r)) != len(r):
            raise ValueError(f"route={self.route!r} is invalid: must list distinct ports")
        _s(self, "route", tuple(check_int(f"route[{i}]", x, 0) for i, x in enumerate(r)))
        _s(self, "rate", check_real("rate", self.rate, 0.0, 100.0, low_open=True))
        _s(self, "on", check_real("on", self.on, 0.0, 1e5, low_open=True))
        _s(self, "off", check_real("off", self.off, 0.0, 1e5))
        _s(self, "phase", check_real("phase", self.phase, 0.0, 1e5))

    @property
    def duty_cycle(self) -> float:
        return self.on / (self.on + self.off)


@dataclass(frozen=True)
class Network:
    """A network scenario (ports, VCs, VBR sources, TCP), validated on construction.

    Parameters
    ----------
    ports : tuple of Port
    vcs : tuple of Vc
    vbr : tuple of VbrSource, optional
    tcp : TcpParams, optional
    link_rate_bps : float, optional(default=155.52e6)
        Reference rate: cell bits per second of a rate-1 link (seed 000 counts the full
        155.52 Mbps as cell rate).
    payload_bytes : int, optional(default=512)
        TCP segment payload (MSS).
    tcpip_header_bytes, llc_snap_bytes, aal5_trailer_bytes : int
        Defaults 40, 8, 8 (seed 000 Sec. 4.2).
    atm : bool, optional(default=True)
        False: TCP alone, the unit is the IP packet and buffers count packets.
    interval : float, optional(default=0.03)
        Measurement / rate-allocation interval s, seconds.
    duration, warmup : float
        Measured time and discarded warm-up, seconds.
    bottleneck : int, optional(default=0)
        Port whose capacity defines efficiency.
    start_jitter : float, optional(default=0.0)
        Each connection starts at a time drawn uniformly on [0, start_jitter) s, anew in
        every replication (0: all start at t = 0 and a network without capacity process
        is deterministic, so replications coincide).
    name : str, optional
    """

    ports: tuple = (Port(),)
    vcs: tuple = (Vc(),)
    vbr: tuple = ()
    tcp: TcpParams = field(default_factory=TcpParams)
    link_rate_bps: float = 155.52e6
    payload_bytes: int = 512
    tcpip_header_bytes: int = 40
    llc_snap_bytes: int = 8
    aal5_trailer_bytes: int = 8
    atm: bool = True
    interval: float = 0.03
    duration: float = 10.0
    warmup: float = 0.0
    bottleneck: int = 0
    start_jitter: float = 0.0
    name: str = ""

    def __post_init__(self):
        for nm, cls in (("ports", Port), ("vcs", Vc), ("vbr", VbrSource)):
            val = getattr(self, nm)
            val = tuple(val) if isinstance(val, (list, tuple)) else (val,)
            for i, x in enumerate(val):
                if not isinstance(x, cls):
                    raise ValueError(f"{nm}[{i}]={x!r} is invalid: must be a {cls.__name__}")
            _s(self, nm, val)
        if not self.ports:
            raise ValueError("ports=() is invalid: needs at least one port")
        if not self.vcs:
            raise ValueError("vcs=() is invalid: needs at least one VC")
        if not isinstance(self.tcp, TcpParams):
            raise ValueError(f"tcp={self.tcp!r} is invalid: must be a TcpParams")
        _s(self, "link_rate_bps", check_real("link_rate_bps", self.link_rate_bps, 1.0, 1e13))
        _s(self, "payload_bytes", check_int("payload_bytes", self.payload_bytes, 1, 65535))
        _s(self, "tcpip_header_bytes", check_int("tcpip_header_bytes", self.tcpip_header_bytes, 0, 1000))
        _s(self, "llc_snap_bytes", check_int("llc_snap_bytes", self.llc_snap_bytes, 0, 100))
        _s(self, "aal5_trailer_bytes", check_int("aal5_trailer_bytes", self.aal5_trailer_bytes, 0, 100))
        if not isinstance(self.atm, bool):
            raise ValueError(f"atm={self.atm!r} is invalid: must be True or False")
        _s(self, "interval", check_real("interval", self.interval, 0.0, 1e4, low_open=True))
        _s(self, "duration", check_real("duration", self.duration, 0.0, 1e7, low_open=True))
        _s(self, "warmup", check_real("warmup", self.warmup, 0.0, 1e7))
        _s(self, "start_jitter", check_real("start_jitter", self.start_jitter, 0.0, 1e4))
        np_ = len(self.ports)
        _s(self, "bottleneck", check_int("bottleneck", self.bottleneck, 0, np_ - 1))
        for i, v in enumerate(list(self.vcs) + list(self.vbr)):
            for p in v.route:
                if p >= np_:
                    raise ValueError(f"route={v.route!r} is invalid: port {p} does not exist "
                                     f"(the network has {np_} ports)")
        for i, v in enumerate(self.vcs):
            if v.feedback_port is not None and v.feedback_port >= np_:
                raise ValueError(f"feedback_port={v.feedback_port!r} is invalid: must be < {np_}")
        if not self.atm and self.vbr:
            raise ValueError("vbr is invalid with atm=False: VBR sources need an ATM network")
        if self.tcp.rto == "fixed":
            for i in range(len(self.vcs)):
                if self.round_trip(i) <= 0:
                    raise ValueError(f"rto='fixed' is invalid for VC {i}: its round-trip propagation delay is 0 "
                                     "(the fixed RTO is a multiple of it); give it delays or use rto='estimator'")
        if self.total_slots > 2**40:
            raise ValueError(f"duration={self.duration!r} is invalid: more than 2**40 cell slots")
        from ..capacity import Trace as LinkTrace
        from .capacity import check_trace_window

        for port in self.ports:
            if isinstance(port.capacity, LinkTrace):
                check_trace_window(port.capacity, self.duration)

    # ---- derived ------------------------------------------------------------------------
    @property
    def slot_seconds(self) -> float:
        """One 53-byte cell time at the reference rate, seconds."""
        return CELL_BYTES * 8 / self.link_rate_bps

    @property
    def cells_per_frame(self) -> int:
        return _units.cells_per_frame(self.payload_bytes, self.tcpip_header_bytes, self.llc_snap_bytes,
                                      self.aal5_trailer_bytes)

    @property
    def units_per_frame(self) -> int:
        return self.cells_per_frame if self.atm else 1

    @property
    def unit_bytes(self) -> int:
        return CELL_BYTES if self.atm else self.payload_bytes + self.tcpip_header_bytes

    @property
    def frame_wire_bytes(self) -> int:
        return self.cells_per_frame * CELL_BYTES if self.atm else self.payload_bytes + self.tcpip_header_bytes

    @property
    def payload_fraction(self) -> float:
        """Payload bytes / wire bytes of a frame (seed 000: 512 / 636 = 80.5 %)."""
        return self.payload_bytes / self.frame_wire_bytes

    @property
    def is_random(self) -> bool:
        """True when replications differ: a port has a capacity process, a queue uses the GFR
        drop lottery, or connections start at random times (``start_jitter`` > 0).  Otherwise
        every replication is the same run and :func:`simulate_network` refuses more than one."""
        return (self.start_jitter > 0
                or any(p.capacity_is_random for p in self.ports)
                or any(pol.kind == "gfr" for p in self.ports for pol in (p.ubr_policy, p.abr_policy)))

    @property
    def n_connections(self) -> int:
        return sum(v.connections for v in self.vcs)

    @property
    def total_slots(self) -> int:
        return _units.total_slots(self.duration, self.warmup, self.slot_seconds)

    def to_slots(self, seconds: float) -> int:
        """Round a time to whole slots (at least 1 for positive times)."""
        return _units.to_slots(seconds, self.slot_seconds)

    def forward_delay(self, i: int) -> float:
        """Forward propagation delay of VC ``i`` (access + inter-port links + egress), s."""
        v = self.vcs[i]
        return v.access_delay + sum(self.ports[p].link_delay for p in v.route[:-1]) + v.egress_delay

    def round_trip(self, i: int) -> float:
        """Round-trip propagation delay of VC ``i``, s."""
        v = self.vcs[i]
        back = v.ack_delay if v.ack_delay is not None else self.forward_delay(i)
        return self.forward_delay(i) + back

    def with_(self, **changes) -> "Network":
        return replace(self, **changes)

    def to_dict(self) -> dict:
        from ..capacity import CapacityModel, Trace as LinkTrace

        def conv(x):
            if isinstance(x, CapacityModel):
                return x.to_dict()
            if isinstance(x, LinkTrace):
                return {"trace": x.name, "period_ms": x.period_ms, "opportunities": x.n_opportunities,
                        "packet_bytes": x.packet_bytes}
            if hasattr(x, "__dataclass_fields__"):
                return {f.name: conv(getattr(x, f.name)) for f in fields(x)}
            if isinstance(x, (list, tuple)):
                return [conv(y) for y in x]
            return x
        return conv(self)
