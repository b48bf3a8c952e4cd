"""Validated scenario for the Markov renewal analysis (Section III of seed 004).

Units: one *time unit* is the transmission time of one TCP packet at the bottleneck's
high rate (r0 = 1).  The low rate is ``rate_ratio`` packets per time unit (service time
r1 = 1 / rate_ratio).  ``delta`` is the round-trip propagation delay in time units,
``bmax`` the bottleneck buffer in packets (counting the packet in service), ``wmax``
the maximum TCP window in packets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .._validate import check_choice, check_int, check_real

__all__ = ["Scenario", "switch_probability", "FEEDBACKS", "ACK_CLOCKS", "MAX_PSI"]

FEEDBACKS = ("instcap", "none", "constant")
ACK_CLOCKS = ("at-epoch", "after-service")
#: Largest psi accepted; beyond it the embedded chain is numerically a constant link.
MAX_PSI = 1e9


def switch_probability(psi: float) -> float:
    """Probability that the embedded rate chain changes state at an epoch ``t_k = k Delta``.

    Assumption III-B.1 embeds the modulating chain at multiples of Delta.  With mean
    sojourn ``tau = psi * Delta`` in each state and sojourns that are geometric in units
    of Delta, the per-epoch switch probability is ``p01 = p10 = 1 / psi``.  This needs
    ``psi >= 1`` (``psi = 1`` is the deterministic alternation); faster variation is
    outside the analysis and must be studied with the simulator (``tcpabr simulate``).
    """
    psi = check_real("psi", psi, 1.0, MAX_PSI)
    return 1.0 / psi


@dataclass(frozen=True)
class Scenario:
    """One operating point of TCP over INSTCAP ABR (or TCP alone).

    Parameters
    ----------
    delta : float
        Round-trip propagation delay Delta, in packet times at the high rate (>= 1).
    bmax : int
        Bottleneck buffer B_max in packets, including the packet in service (>= 1).
    psi : float
        Mean time in each capacity state over Delta, psi = tau / Delta (>= 1).
    rate_ratio : float
        Low rate / high rate, in (0, 1]; 1 means a constant-capacity link.
    wmax : int
        Maximum TCP window W_max in packets.
    feedback : {'instcap', 'none', 'constant'}
        'instcap': TCP over ABR whose source rate follows the bottleneck rate one
        Delta later (assumption III-A.8).  'none': TCP alone (Section III-D).
        'constant': the ABR source held at ``source_rate`` (Section IV experiment).
    source_rate : float, optional
        Packets per time unit for ``feedback='constant'``, in [rate_ratio, 1].
    max_states : int
        Guard: the states are counted before building, and more than this many raise
        :class:`~tcpabr_model.errors.ChainTooLargeError`.
    bmax_counts_service : bool
        True (default): ``bmax`` counts the packet in service, so the bottleneck holds
        ``bmax`` packets in all.  False: the paper's count (Sec. III-C), ``bmax`` waiting
        places plus the one in service (``bmax + 1`` in all); this moves eq. 18 by up to
        0.1 in small pipes (docs/model.md sec. 3).
    ack_clock : {'at-epoch', 'after-service'}
        TCP alone only: the d returning ACKs of an interval arrive at ``i g`` ('at-epoch',
        the default: the first at T_k, the pessimistic phase) or at ``(i + 1) g``
        ('after-service': one ACK spacing later), ``g = min(S, Delta/d)``
        (docs/model.md sec. 3; moves TCP alone by about one buffer slot in small pipes).
    """

    delta: float = 40.0
    bmax: int = 10
    psi: float = 20.0
    rate_ratio: float = 0.5
    wmax: int = 128
    feedback: str = "instcap"
    source_rate: float | None = None
    max_states: int = 5_000_000
    bmax_counts_service: bool = True
    ack_clock: str = "at-epoch"

    def __post_init__(self):
        object.__setattr__(self, "delta", check_real("delta", self.delta, 1.0, 1e5))
        object.__setattr__(self, "bmax", check_int("bmax", self.bmax, 1, 100_000))
        if isinstance(self.psi, (int, float)) and not isinstance(self.psi, bool) and 0 < self.psi < 1:
            raise ValueError(
                f"psi={self.psi!r} is invalid: the embedded analysis needs psi >= 1 (rate changes "
                "at most once per round-trip delay); use the cell-level simulator "
                "(tcpabr simulate / tcpabr_model.sim) for psi < 1"
            )
        object.__setattr__(self, "psi", check_real("psi", self.psi, 1.0, MAX_PSI))
        object.__setattr__(
            self, "rate_ratio", check_real("rate_ratio", self.rate_ratio, 0.0, 1.0, low_open=True)
        )
        object.__setattr__(self, "wmax", check_int("wmax", self.wmax, 1, 1_000_000))
        check_choice("feedback", self.feedback, FEEDBACKS)
        if self.feedback == "constant":
            if self.source_rate is None:
                raise ValueError("source_rate=None is invalid: feedback='constant' needs a source_rate "
                                 f"in [{self.rate_ratio}, 1] packets per time unit")
            object.__setattr__(
                self, "source_rate", check_real("source_rate", self.source_rate, self.rate_ratio, 1.0)
            )
        elif self.source_rate is not None:
            raise ValueError(f"source_rate={self.source_rate!r} is invalid: only used with feedback='constant'")
        object.__setattr__(self, "max_states", check_int("max_states", self.max_states, 1, 10**9))
        if not isinstance(self.bmax_counts_service, bool):
            raise ValueError(f"bmax_counts_service={self.bmax_counts_service!r} is invalid: must be True or False")
        check_choice("ack_clock", self.ack_clock, ACK_CLOCKS)
        if self.ack_clock != "at-epoch" and self.feedback != "none":
            raise ValueError(f"ack_clock={self.ack_clock!r} is invalid with feedback={self.feedback!r}: "
                             "the ACK-clock phase is a TCP-alone convention (feedback='none')")
        if math.floor(self.delta * self.rate_ratio + 1e-9) < 1:
            raise ValueError(
                f"delta={self.delta!r} is invalid: at the low rate {self.rate_ratio} at least one "
                "packet must fit in a round-trip delay (delta * rate_ratio >= 1)"
            )

    # derived quantities -------------------------------------------------------------
    @property
    def service_times(self) -> tuple[float, float]:
        """(r0, r1): bottleneck packet service times in the high and low state."""
        return 1.0, 1.0 / self.rate_ratio

    @property
    def capacity(self) -> int:
        """Packets the bottleneck holds in all, including the one in service."""
        return self.bmax if self.bmax_counts_service else self.bmax + 1

    @property
    def p_switch(self) -> float:
        """Per-epoch switch probability of the embedded rate chain (1/psi)."""
        return switch_probability(self.psi)

    @property
    def mean_capacity(self) -> float:
        """Mean bottleneck capacity in packets per time unit (symmetric chain: (1 + ratio)/2)."""
        return 0.5 * (1.0 + self.rate_ratio)

    def with_psi(self, psi: float) -> "Scenario":
        return replace(self, psi=psi)

    def structure_key(self) -> tuple:
        """Everything the psi-independent skeleton depends on (the buffer as its capacity)."""
        return (self.delta, self.capacity, self.rate_ratio, self.wmax, self.feedback, self.source_rate,
                self.ack_clock)
