"""Validated simulation scenarios, in physical units, with the paper's normalisation.

Units
-----
Physical inputs are seconds, bytes and bytes per second.  Following Sections V-VI of the
core paper, the link rates are quoted on the *segment payload* basis: with 500-byte
packets and a high rate of 100 kB/s, one packet (frame) transmission time at the high
rate is 500 / 100e3 = 5 ms, the paper's *time unit*, so that Delta = 200 ms is 40 time
units and the bandwidth-delay product in the high state is 40 packets.

On the wire each packet is an AAL5 frame: payload + TCP/IP header (40 B) + LLC/SNAP
(8 B) + AAL5 trailer (8 B) = 556 B, padded to whole 48-byte cell payloads, i.e. 12
cells = 636 B.  The high-rate link therefore carries 12 cells per time unit (127.2 kB/s of
cells); the simulator's slot is one cell time at the high rate, 5 ms / 12 = 0.4167 ms.

TCP alone uses a link without ATM that carries one IP packet (payload + 40 B = 540 B) per
time unit at the high rate, so ``delta`` is the same pipe of ``delta`` packets in every mode
(:mod:`tcpabr_model.units`).  The router buffer counts packets.

A K-state capacity model or a measured trace (``capacity=``) replaces the two-state process;
see ``docs/simulator.md``, "K-state capacity and trace replay", for how its rates and times
map to cells and slots.

See ``docs/simulator.md`` for every modelling choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

from .. import units as _units
from ..capacity import CapacityModel
from ..capacity import Trace as LinkTrace
from .._validate import check_choice, check_int, check_real
from .feedback import m_from_delta, n_from_k
from .network import CapacityProcess, DropPolicy, Network, Port, TcpParams, Vc

__all__ = ["TcpConfig", "Scenario", "from_sim_scenario", "capacity_packet_bytes", "CELL_BYTES",
           "CELL_PAYLOAD_BYTES"]

from ..units import CELL_BYTES, CELL_PAYLOAD_BYTES, normalized_to_physical
from ..units import cells_per_frame as _cells_per_frame
from ..units import slot_bytes as _slot_bytes
from ..units import time_unit as _time_unit

FEEDBACKS = ("instcap", "effcap", "none", "constant")
CAPACITY_MODES = ("continuous", "embedded")
DISCARDS = ("ppd", "epd")


@dataclass(frozen=True)
class TcpConfig(TcpParams):
    """TCP settings of the single-bottleneck scenarios: :class:`TcpParams` (one settings type,
    one validation) with the core paper's defaults instead of the seeds' network ones.

    Differences from :class:`TcpParams`: ``variant='timeout-only'`` (the paper's model,
    Section III-A assumption 7), ``rto='fixed'`` (RTO = ``rto_rtt_factor`` x the round trip,
    the testbed's footnote 3, no back-off), ``granularity=0.01`` s, ``rto_min=1.0`` s (RFC
    6298 (2.4): the minimum of ``rto='estimator'``; the fixed RTO ignores it).  Every field
    and its range is documented on :class:`TcpParams`; the old variant name
    'no-fast-retransmit' is accepted with a DeprecationWarning.
    """

    variant: str = "timeout-only"
    rto: str = "fixed"
    granularity: float = 0.01
    rto_min: float = 1.0


#: a given ``high_rate`` must agree with the one a physical capacity implies to this relative tolerance
HIGH_RATE_RTOL = 1e-9
_DEFAULT_HIGH_RATE = 100e3


def capacity_high_rate(capacity, payload_bytes: int, frame_link_bytes: int) -> float | None:
    """The ``high_rate`` (payload bytes per second at the peak) that ``capacity`` implies, or
    None when it is stated in the paper's abstract unit (a model without ``time_unit``).

    The peak link rate in bytes per second is, for a trace, the busiest 1-ms bin's
    opportunities x ``packet_bytes`` per ms; for a model with ``time_unit`` the largest level
    x ``packet_bytes`` (the scenario's packet on the payload basis when ``packet_bytes`` is
    None) per ``time_unit``.  Those are bytes of the link (cells over ATM, IP packets for
    TCP alone, ``frame_link_bytes`` per packet), so ``high_rate = peak x payload /
    frame_link_bytes``.
    """
    from .capacity import trace_levels

    if isinstance(capacity, LinkTrace):
        peak = trace_levels(capacity)[2] * capacity.packet_bytes * 1000.0
        return peak * payload_bytes / frame_link_bytes
    if capacity.time_unit is None:
        return None
    top = float(max(capacity.levels))
    if capacity.packet_bytes is None:
        return top * payload_bytes / capacity.time_unit
    return top * capacity.packet_bytes / capacity.time_unit * payload_bytes / frame_link_bytes


def capacity_packet_bytes(capacity) -> int | None:
    """Bytes of the packet a capacity is counted in: a trace's delivery opportunity (1500 for
    Mahimahi), a :class:`~tcpabr_model.capacity.CapacityModel`'s ``packet_bytes`` (fits of traces:
    1500); None for the two-state process or a model without ``packet_bytes`` (counted in the
    scenario's own packets).

    With ``payload_bytes = capacity_packet_bytes(c) - tcpip_header_bytes`` one IP packet is one
    packet of the capacity, which is how ``tcpabr simulate`` and :mod:`tcpabr_model.trace_study`
    replay a trace (1460-byte segments), so that ``efficiency_wire`` is packets over the
    capacity in packets.
    """
    if isinstance(capacity, LinkTrace):
        return int(capacity.packet_bytes)
    if isinstance(capacity, CapacityModel) and capacity.packet_bytes is not None:
        return int(capacity.packet_bytes)
    return None


def _tuple_of(name, value, n, check, allow_none=True):
    if value is None:
        if allow_none:
            return None
        raise ValueError(f"{name}=None is invalid: must be given")
    if isinstance(value, (list, tuple)):
        vals = tuple(value)
    else:
        vals = (value,) * n
    if len(vals) != n:
        raise ValueError(f"{name}={value!r} is invalid: must have one entry per connection ({n})")
    return tuple(check(f"{name}[{i}]", v) for i, v in enumerate(vals))


#: the largest round trip and feedback delay the simulator takes, seconds: its network's ACK and feedback
#: delays are checked against it (network.Vc)
MAX_RTT_SECONDS = 100.0


@dataclass(frozen=True)
class Scenario:
    """A TCP/ABR (or TCP alone) scenario in physical units; validated on construction.

    Parameters
    ----------
    feedback : {'instcap', 'effcap', 'none', 'constant'}, optional(default='instcap')
        'none' is TCP alone (no segmentation buffer, host link ``host_rate_factor``
        times the high bottleneck rate, IP packets without ATM overhead).  'constant'
        holds the ABR source at ``initial_rate`` and ignores feedback (the constant-rate
        source of seed 004 Section IV, used to calibrate delta).
    rtt : float or tuple of float, optional(default=0.2)
        Round-trip propagation delay Delta_i of each connection, seconds.  Its length
        sets the number of connections.
    tau : float, optional(default=4.0)
        Mean sojourn time in each capacity state, seconds (psi = tau / max(rtt)).
    high_rate : float, optional(default=100e3)
        Available capacity in the high state, bytes of segment payload per second (see
        module docstring).
    rate_ratio : float, optional(default=0.5)
        Low rate / high rate, in (0, 1].
    buffer_packets : int, optional(default=10)
        Bottleneck buffer in packets; in cells for ATM, ``buffer_packets x cells per
        frame``.  It counts the unit (cell or packet) in service.
    interval : float, optional(default=0.03)
        Measurement and feedback interval s, seconds.
    m, n : int or tuple of int, optional
        EFFCAP parameters per connection.  Defaults: ``M : Delta_i`` and ``N : 8 Delta_i``
        (Section V-B).  INSTCAP is M = N = 1 and rejects other values.
    feedback_delay : float or tuple of float, optional
        Delay from the end of a measurement interval to the source, seconds; default
        one round-trip delay of the connection (Section V).
    share : float or tuple of float, optional
        Fraction of the capacity estimate fed back to each connection; default
        1 / number of connections (Section VII).
    capacity_mode : {'continuous', 'embedded'}, optional(default='continuous')
        See :mod:`tcpabr_model.sim.capacity`.  'embedded' changes the capacity only at
        multiples of ``embed_period`` (default max(rtt)).
    embed_period : float, optional
    initial_state : {'stationary', 'high', 'low'}, optional(default='stationary')
    initial_rate : float, optional(default=1.0)
        ABR allowed rate before the first feedback arrives (normalised capacity); with
        ``feedback='constant'`` the source's rate throughout.
    discard : {'ppd', 'epd'}, optional(default='ppd')
        Partial packet discard (after one cell of a frame is lost, the rest of the frame
        is discarded) or, in addition, early packet discard of whole frames whose first
        cell finds at least ``epd_threshold_packets`` worth of cells queued.
    epd_threshold_packets : float, optional
        In (0, buffer_packets]; default ``buffer_packets - 1`` (half a packet when
        ``buffer_packets`` is 1).
    payload_bytes, tcpip_header_bytes, llc_snap_bytes, aal5_trailer_bytes : int
        Packet composition (defaults 500, 40, 8, 8).
    host_rate_factor : float, optional(default=10.0)
        TCP alone: host link rate / high bottleneck rate.
    tcp : TcpConfig, optional
    duration : float, optional(default=2000.0)
        Measured length of one replication, seconds (after ``warmup``).
    warmup : float, optional(default=20.0)
        Discarded initial transient, seconds.
    capacity : CapacityModel or tcpabr_model.capacity.Trace, optional
        A K-state capacity chain or a measured Mahimahi trace replayed as the bottleneck's
        service, instead of the two-state process (``tau``, ``rate_ratio``,
        ``capacity_mode``, ``embed_period`` and ``initial_state`` are then unused).  A trace,
        or a model with ``time_unit``, fixes the peak rate: ``high_rate`` is derived from
        it (a different value given is refused).  A model without ``time_unit`` is in the
        paper's unit (one packet time at ``high_rate``): its largest level must be 1.
    capacity_offset : float, optional
        With a trace: seconds into the trace at time 0 (rounded to whole ms).  None (the
        default) draws a whole ms uniformly in the period for each replication.
    mcr : float or tuple of float, optional(default=0.0)
        Minimum cell rate of each INSTCAP/EFFCAP source (TM 4.0), as a fraction of the high
        rate (the unit of ``initial_rate``; with a trace the high rate is its busiest ms), in
        [0, 1]: the source's allowed rate is max(fed-back value x ``share``, ``mcr``) at all
        times, before the first feedback included, so that an empty measurement block
        (EFFCAP's eq. 28 is 0 after an outage) does not stop it.  0, TM 4.0's default, is the
        paper's source (every number unchanged); other values need feedback 'instcap' or
        'effcap'.
    """

    feedback: str = "instcap"
    rtt: tuple = (0.2,)
    tau: float = 4.0
    high_rate: float = 100e3
    rate_ratio: float = 0.5
    buffer_packets: int = 10
    interval: float = 0.03
    m: tuple | None = None
    n: tuple | None = None
    feedback_delay: tuple | None = None
    share: tuple | None = None
    capacity_mode: str = "continuous"
    embed_period: float | None = None
    initial_state: str = "stationary"
    initial_rate: float = 1.0
    discard: str = "ppd"
    epd_threshold_packets: float | None = None
    payload_bytes: int = 500
    tcpip_header_bytes: int = 40
    llc_snap_bytes: int = 8
    aal5_trailer_bytes: int = 8
    host_rate_factor: float = 10.0
    tcp: TcpConfig = field(default_factory=TcpConfig)
    duration: float = 2000.0
    warmup: float = 20.0
    capacity: CapacityModel | LinkTrace | None = None
    capacity_offset: float | None = None
    mcr: float | tuple = 0.0

    def __post_init__(self):
        s = object.__setattr__
        check_choice("feedback", self.feedback, FEEDBACKS)
        self._set_capacity()
        rtt = self.rtt if isinstance(self.rtt, (list, tuple)) else (self.rtt,)
        if len(rtt) < 1 or len(rtt) > 64:
            raise ValueError(f"rtt={self.rtt!r} is invalid: must hold 1 to 64 connections")
        rtt = tuple(check_real(f"rtt[{i}]", v, 0.0, MAX_RTT_SECONDS, low_open=True) for i, v in enumerate(rtt))
        s(self, "rtt", rtt)
        nc = len(rtt)
        s(self, "tau", check_real("tau", self.tau, 0.0, low_open=True))
        s(self, "high_rate", check_real("high_rate", self.high_rate, 0.0, 1e12, low_open=True))
        s(self, "rate_ratio", check_real("rate_ratio", self.rate_ratio, 0.0, 1.0, low_open=True))
        s(self, "buffer_packets", check_int("buffer_packets", self.buffer_packets, 1, 1_000_000))
        s(self, "payload_bytes", check_int("payload_bytes", self.payload_bytes, 1, 65_495))
        s(self, "tcpip_header_bytes", check_int("tcpip_header_bytes", self.tcpip_header_bytes, 0, 200))
        s(self, "llc_snap_bytes", check_int("llc_snap_bytes", self.llc_snap_bytes, 0, 64))
        s(self, "aal5_trailer_bytes", check_int("aal5_trailer_bytes", self.aal5_trailer_bytes, 0, 64))
        s(self, "interval", check_real("interval", self.interval, 0.0, low_open=True))
        if self.interval < self.slot_seconds * (1 - 1e-9):
            raise ValueError(f"interval={self.interval!r} is invalid: must be >= one cell time "
                             f"({self.slot_seconds:.6g} s)")
        for i, d in enumerate(rtt):
            if d < self.slot_seconds:
                raise ValueError(f"rtt[{i}]={d!r} is invalid: must be >= one cell time ({self.slot_seconds:.6g} s)")
        if self.feedback == "instcap":
            for nm in ("m", "n"):
                v = _tuple_of(nm, getattr(self, nm), nc, lambda a, b: check_int(a, b, 1))
                if v is not None and any(x != 1 for x in v):
                    raise ValueError(f"{nm}={getattr(self, nm)!r} is invalid: INSTCAP is M = N = 1; "
                                     "use feedback='effcap' for other values")
            s(self, "m", (1,) * nc)
            s(self, "n", (1,) * nc)
        else:
            m = _tuple_of("m", self.m, nc, lambda a, b: check_int(a, b, 1, 100_000))
            n = _tuple_of("n", self.n, nc, lambda a, b: check_int(a, b, 1, 1_000_000))
            if m is None:
                m = tuple(m_from_delta(d, self.interval) for d in rtt)
            if n is None:
                n = tuple(n_from_k(8, d, self.interval) for d in rtt)
            s(self, "m", m)
            s(self, "n", n)
        fd = _tuple_of("feedback_delay", self.feedback_delay, nc, lambda a, b: check_real(a, b, 0.0, MAX_RTT_SECONDS))
        s(self, "feedback_delay", fd if fd is not None else rtt)
        sh = _tuple_of("share", self.share, nc, lambda a, b: check_real(a, b, 0.0, 1.0, low_open=True))
        s(self, "share", sh if sh is not None else (1.0 / nc,) * nc)
        mcr = self.mcr if isinstance(self.mcr, (list, tuple)) else check_real("mcr", self.mcr, 0.0, 1.0)
        mcr = _tuple_of("mcr", mcr, nc, lambda a, b: check_real(a, b, 0.0, 1.0), allow_none=False)
        if any(mcr) and self.feedback not in ("instcap", "effcap"):
            raise ValueError(f"mcr={self.mcr!r} is invalid with feedback={self.feedback!r}: the minimum cell rate "
                             "applies to INSTCAP/EFFCAP sources only (use 0)")
        s(self, "mcr", mcr)
        check_choice("capacity_mode", self.capacity_mode, CAPACITY_MODES)
        if self.embed_period is not None:
            s(self, "embed_period", check_real("embed_period", self.embed_period, 0.0, low_open=True))
        if self.capacity_mode == "embedded" and self.tau < self.period * (1 - 1e-12):
            raise ValueError(f"tau={self.tau!r} is invalid: embedded mode needs psi = tau / period >= 1 "
                             f"(period {self.period!r} s); use capacity_mode='continuous' for psi < 1")
        check_choice("initial_state", self.initial_state, ("stationary", "high", "low"))
        s(self, "initial_rate", check_real("initial_rate", self.initial_rate, 0.0, 1.0, low_open=True))
        check_choice("discard", self.discard, DISCARDS)
        if self.epd_threshold_packets is not None:
            s(self, "epd_threshold_packets", check_real("epd_threshold_packets", self.epd_threshold_packets,
                                                        0.0, float(self.buffer_packets), low_open=True))
        s(self, "host_rate_factor", check_real("host_rate_factor", self.host_rate_factor, 1.0, 1e4))
        if not isinstance(self.tcp, TcpParams):
            raise ValueError(f"tcp={self.tcp!r} is invalid: must be a TcpConfig (or TcpParams)")
        s(self, "duration", check_real("duration", self.duration, 0.0, 1e8, low_open=True))
        s(self, "warmup", check_real("warmup", self.warmup, 0.0, 1e8))
        if self.total_slots > 2**40:
            raise ValueError(f"duration={self.duration!r} is invalid: more than 2**40 cell slots")
        if isinstance(self.capacity, LinkTrace):
            from .capacity import check_trace_window

            check_trace_window(self.capacity, self.duration)

    def _set_capacity(self) -> None:
        """Validate ``capacity`` / ``capacity_offset`` and derive ``high_rate`` from a physical one."""
        cap = self.capacity
        if cap is not None and not isinstance(cap, (CapacityModel, LinkTrace)):
            raise ValueError(f"capacity={cap!r} is invalid: must be a tcpabr_model.capacity.CapacityModel, "
                             "a tcpabr_model.capacity.Trace or None")
        if self.capacity_offset is not None:
            if not isinstance(cap, LinkTrace):
                raise ValueError(f"capacity_offset={self.capacity_offset!r} is invalid: only used with a trace "
                                 "(capacity=Trace)")
            object.__setattr__(self, "capacity_offset",
                               check_real("capacity_offset", self.capacity_offset, 0.0, 1e8))
        if cap is None:
            return
        payload = check_int("payload_bytes", self.payload_bytes, 1, 65_495)
        ip = payload + check_int("tcpip_header_bytes", self.tcpip_header_bytes, 0, 200)
        frame = ip if self.feedback == "none" else _cells_per_frame(
            payload, self.tcpip_header_bytes, self.llc_snap_bytes, self.aal5_trailer_bytes) * CELL_BYTES
        hr = capacity_high_rate(cap, payload, frame)
        if hr is None:
            top = float(max(cap.levels))
            if top != 1.0:
                raise ValueError(f"capacity.levels (largest {top!r}) is invalid with time_unit=None: in the paper's "
                                 "unit (one packet time at high_rate) the largest level must be 1; scale the "
                                 "levels or give the model a time_unit in seconds")
            return
        given = self.high_rate
        if given != _DEFAULT_HIGH_RATE and not math.isclose(given, hr, rel_tol=HIGH_RATE_RTOL):
            raise ValueError(f"high_rate={given!r} is invalid with this capacity: the capacity's peak implies "
                             f"high_rate={hr!r} B/s of payload; omit high_rate")
        object.__setattr__(self, "high_rate", hr)

    # ---- derived quantities --------------------------------------------------------
    @property
    def n_connections(self) -> int:
        return len(self.rtt)

    @property
    def cells_per_frame(self) -> int:
        """AAL5 frame length in cells: ceil((payload + TCP/IP + LLC/SNAP + trailer) / 48)."""
        return _cells_per_frame(self.payload_bytes, self.tcpip_header_bytes, self.llc_snap_bytes,
                                self.aal5_trailer_bytes)

    @property
    def frame_wire_bytes(self) -> int:
        return self.cells_per_frame * CELL_BYTES

    @property
    def ip_packet_bytes(self) -> int:
        return self.payload_bytes + self.tcpip_header_bytes

    @property
    def overhead_factor(self) -> float:
        """IP bytes / wire bytes of one frame: the efficiency ceiling over ATM."""
        return self.ip_packet_bytes / self.frame_wire_bytes

    @property
    def time_unit(self) -> float:
        """The paper's time unit: one packet time at the high rate, seconds."""
        return _time_unit(self.payload_bytes, self.high_rate)

    @property
    def slot_bytes(self) -> float:
        """Bytes the bottleneck serves per slot at the high rate (:func:`tcpabr_model.units.slot_bytes`):
        53 over ATM; ``ip_packet_bytes / cells_per_frame`` for TCP alone (one packet per time unit)."""
        return _slot_bytes(self.feedback != "none", self.ip_packet_bytes, self.cells_per_frame)

    @property
    def slot_seconds(self) -> float:
        """One cell time at the high rate, seconds (the simulator's time step)."""
        return self.time_unit / self.cells_per_frame

    @property
    def period(self) -> float:
        """Embedding period of ``capacity_mode='embedded'`` (default max rtt)."""
        return self.embed_period if self.embed_period is not None else max(self.rtt)

    @property
    def psi(self) -> float:
        """tau / max(rtt) (Sections V and VII)."""
        return self.tau / max(self.rtt)

    @property
    def total_slots(self) -> int:
        return _units.total_slots(self.duration, self.warmup, self.slot_seconds)

    def to_slots(self, seconds: float) -> int:
        """Round a time to whole slots (at least 1 for positive times)."""
        return _units.to_slots(seconds, self.slot_seconds)

    @property
    def capacity_kind(self) -> str:
        """'two-state', 'model' (a K-state CapacityModel) or 'trace'."""
        if self.capacity is None:
            return "two-state"
        return "trace" if isinstance(self.capacity, LinkTrace) else "model"

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("tcp", "capacity")}
        if isinstance(self.capacity, LinkTrace):
            t = self.capacity
            d["capacity"] = {"trace": t.name, "period_ms": t.period_ms, "opportunities": t.n_opportunities,
                             "packet_bytes": t.packet_bytes, "mean_bits_per_second": t.mean_bits_per_second}
        elif self.capacity is not None:
            d["capacity"] = self.capacity.to_dict()
        else:
            d["capacity"] = None
        d["tcp"] = {f.name: getattr(self.tcp, f.name) for f in fields(self.tcp)}
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = list(v)
        d["psi"] = self.psi
        d["cells_per_frame"] = self.cells_per_frame
        d["slot_seconds"] = self.slot_seconds
        d["time_unit"] = self.time_unit
        return d

    def to_network(self):
        """The same system as a :class:`tcpabr_model.sim.Network` (one port, one VC per
        connection, all propagation on the ACK path).  The general kernel gives it the same
        counters as the fast path (``tests/test_sim_fastpath.py``)."""
        return from_sim_scenario(self)

    def with_(self, **changes) -> "Scenario":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    # ---- the paper's normalised units ---------------------------------------------
    @classmethod
    def from_normalized(cls, delta=40.0, bmax: int = 10, psi: float = 20.0, rate_ratio: float = 0.5,
                        feedback: str = "instcap", wmax: int = 128, *, duration_units: float | None = None,
                        warmup_units: float | None = None, tcp: TcpConfig | None = None,
                        **kwargs) -> "Scenario":
        """Build a scenario from the paper's normalised units (Section V).

        Parameters
        ----------
        delta : float or sequence of float, optional(default=40)
            Round-trip propagation delay of each connection, in time units (packet times at
            the high rate).
        bmax : int, optional(default=10)
            Bottleneck buffer in packets.
        psi : float, optional(default=20)
            Mean sojourn per capacity state / max(delta).
        rate_ratio : float, optional(default=0.5)
        feedback : {'instcap', 'effcap', 'none'}, optional(default='instcap')
        wmax : int, optional(default=128)
            Maximum window in packets (ignored if ``tcp`` is given).
        duration_units, warmup_units : float, optional
            Replication length and warm-up in time units (defaults: the Scenario defaults
            in seconds).
        tcp : TcpConfig, optional
        **kwargs
            Any other :class:`Scenario` field in physical units (e.g. ``interval``, ``m``,
            ``n``, ``capacity_mode``, ``capacity``).  The time unit is ``payload_bytes /
            high_rate`` (5 ms with the defaults), so ``interval=0.03`` is 6 time units; with a
            trace (or a model in seconds) ``high_rate`` is its peak rate, so ``delta`` is in
            packet times at the peak.
        """
        given = {"rtt": "delta", "tau": "psi", "buffer_packets": "bmax"}   # set here from the normalised ones
        taken = sorted(f.name for f in fields(cls) if f.name not in given and f.name not in
                       ("feedback", "rate_ratio", "tcp"))
        for key, value in kwargs.items():
            if key in given:
                raise ValueError(f"{key}={value!r} is invalid in from_normalized: give {given[key]} (normalised "
                                 "units), or build Scenario(...) in physical units")
            if key not in taken:
                raise ValueError(f"{key}={value!r} is invalid: not a keyword of Scenario.from_normalized (allowed: "
                                 f"delta, bmax, psi, rate_ratio, feedback, wmax, duration_units, warmup_units, tcp, "
                                 f"{', '.join(taken)})")
        psi = check_real("psi", psi, 0.0, low_open=True)
        bmax = check_int("bmax", bmax, 1, 1_000_000)
        deltas = tuple(delta) if isinstance(delta, (list, tuple)) else (delta,)
        payload = kwargs.get("payload_bytes", 500)
        high = kwargs.get("high_rate", _DEFAULT_HIGH_RATE)
        cap = kwargs.get("capacity")
        if isinstance(cap, (CapacityModel, LinkTrace)) and "high_rate" not in kwargs:
            # a trace (or a model in seconds) fixes the peak rate, hence the time unit of delta
            pl = check_int("payload_bytes", payload, 1, 65_495)
            ip = pl + kwargs.get("tcpip_header_bytes", 40)
            frame = ip if feedback == "none" else _cells_per_frame(
                pl, kwargs.get("tcpip_header_bytes", 40), kwargs.get("llc_snap_bytes", 8),
                kwargs.get("aal5_trailer_bytes", 8)) * CELL_BYTES
            hr = capacity_high_rate(cap, pl, frame)
            high = hr if hr is not None else high
        unit = check_int("payload_bytes", payload, 1) / check_real("high_rate", high, 0.0, low_open=True)
        # the physical limit (rtt <= MAX_RTT_SECONDS) stated in the caller's unit, time units
        deltas = tuple(check_real(f"delta[{i}]" if len(deltas) > 1 else "delta", d, 0.0, MAX_RTT_SECONDS / unit,
                                  low_open=True) for i, d in enumerate(deltas))
        if tcp is None:
            tcp = TcpConfig(wmax=wmax)
        if duration_units is not None:
            kwargs["duration"] = check_real("duration_units", duration_units, 0.0, low_open=True) * unit
        if warmup_units is not None:
            kwargs["warmup"] = check_real("warmup_units", warmup_units, 0.0) * unit
        rtt, tau = normalized_to_physical(deltas, psi, payload, high)
        return cls(feedback=feedback, rtt=rtt, tau=tau, rate_ratio=rate_ratio,
                   buffer_packets=bmax, tcp=tcp, **kwargs)


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
                          initial_rate=sc.initial_rate, mcr=sc.mcr[c]))
        else:
            vcs.append(Vc(route=(0,), category="ubr", pcr=sc.host_rate_factor * rate, ack_delay=sc.rtt[c]))
    # the link rate is one cell per slot: slot_seconds round-trips bit for bit
    return Network(ports=(port,), vcs=tuple(vcs), tcp=tcp, link_rate_bps=CELL_BYTES * 8 / sc.slot_seconds,
                   payload_bytes=sc.payload_bytes, tcpip_header_bytes=sc.tcpip_header_bytes,
                   llc_snap_bytes=sc.llc_snap_bytes, aal5_trailer_bytes=sc.aal5_trailer_bytes, atm=atm,
                   interval=sc.interval, duration=sc.duration, warmup=sc.warmup, name="from_sim_scenario")
