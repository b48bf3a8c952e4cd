r"""The capacity model: a K-level Markov-modulated available capacity.

The available capacity of the bottleneck is :math:`c(X_t)` where :math:`X` is an
irreducible Markov chain on ``{0, ..., K-1}`` and ``c_k >= 0`` are the **levels**, in
packets per time unit.  Time is either

discrete
    ``X`` changes only at epochs :math:`t_n = n\,\epsilon` (``epoch`` time units apart)
    with the K x K transition matrix ``P`` (one step = one epoch).  This is the embedded
    modulating chain of seed 004 (Section III-B, assumption 1, epoch = Delta), and the
    slotted server of Section IV (eq. 23) with :math:`C_i = c_{X_i}\,\epsilon` packets
    per slot.
continuous
    ``X`` is a continuous-time chain with generator ``Q`` (rates per time unit).
    :meth:`CapacityModel.discretize` samples it every ``epoch``: ``P = expm(Q epoch)``;
    :meth:`CapacityModel.to_generator` goes back where a valid generator exists
    (``logm``; the embedding problem has no solution for e.g. the paper's chain with
    ``psi <= 2``, and that is refused).

Units: ``levels`` in packets per *time unit*.  ``time_unit`` gives the time unit in
seconds (``None``: the paper's abstract unit, one packet time at the high rate) and
``packet_bytes`` the packet size (``None``: not stated); with both, :attr:`bits_per_second`
is defined.  A level of 0 is an **outage**; it is allowed in the type and by the closed
forms, and refused with :meth:`CapacityModel.require_no_outage` by consumers that divide by
the rate (e.g. an engine that uses service times ``1 / c_k``).

The chain must be stochastic (rows of ``P`` sum to 1, rows of ``Q`` to 0) and
irreducible; otherwise construction raises (``ValueError`` for a non-stochastic matrix,
:class:`~tcpabr_model.errors.ErgodicityError` for a reducible one, naming the classes).
Periodic chains are accepted: the paper's ``psi = 1`` chain alternates deterministically
and still has a unique stationary distribution.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse.csgraph import connected_components

from .._validate import check_choice, check_int, check_real
from ..closed_forms.modulating_chain import ROW_SUM_TOL, stationary_distribution
from ..errors import ErgodicityError, ModelError

__all__ = ["CapacityModel", "two_state", "constant", "from_arrays", "MAX_PSI"]

#: largest psi accepted by :func:`two_state` (the engine's bound, seed 004 Section III)
MAX_PSI = 1e9
#: tolerance on generator row sums, relative to the largest rate
GENERATOR_ROW_TOL = 1e-9


def _readonly(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _square(name: str, m, k: int) -> np.ndarray:
    a = np.asarray(m, dtype=float)
    if a.ndim != 2 or a.shape != (k, k):
        raise ValueError(f"{name}.shape={a.shape} is invalid: must be ({k}, {k}) to match the {k} levels")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} is invalid: entries must be finite")
    return a


def _check_irreducible(name: str, support: np.ndarray) -> None:
    """Raise ErgodicityError naming the communicating classes when ``support`` is reducible."""
    n, lab = connected_components(support, directed=True, connection="strong")
    if n > 1:
        classes = [np.flatnonzero(lab == i).tolist() for i in range(n)]
        raise ErgodicityError(
            f"{name} is not irreducible: its states split into the classes {classes} that do not all "
            "communicate, so the capacity process has no unique stationary distribution"
        )


@dataclass(frozen=True, eq=False)
class CapacityModel:
    """A K-level Markov-modulated capacity (validated on construction; immutable).

    Parameters
    ----------
    levels : array_like(float, ndim=1)
        :math:`c_1..c_K` >= 0, packets per time unit (0 = outage); the stationary mean
        must be > 0.
    transition : array_like(float, ndim=2), optional
        K x K transition matrix per epoch (discrete time).  Exactly one of
        ``transition`` and ``generator``.
    generator : array_like(float, ndim=2), optional
        K x K generator, rates per time unit (continuous time).
    epoch : float > 0, optional
        Epoch length in time units; required with ``transition``, ignored (must be
        ``None``) with ``generator``.
    time_unit : float > 0, optional
        Seconds per time unit (``None``: the paper's abstract unit).
    packet_bytes : int >= 1, optional
        Bytes per packet, for :attr:`bits_per_second`.
    """

    levels: np.ndarray
    transition: np.ndarray | None = None
    generator: np.ndarray | None = None
    epoch: float | None = None
    time_unit: float | None = None
    packet_bytes: int | None = None
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        s = functools.partial(object.__setattr__, self)
        c = np.asarray(self.levels, dtype=float)
        if c.ndim != 1 or c.size == 0:
            raise ValueError(f"levels.shape={c.shape} is invalid: must be a non-empty 1-D array")
        bad = np.flatnonzero(~np.isfinite(c) | (c < 0))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"levels[{i}]={float(c[i])!r} is invalid: must be a finite rate >= 0 (packets per time unit)")
        k = c.size
        s("levels", _readonly(c))
        if (self.transition is None) == (self.generator is None):
            raise ValueError("transition/generator is invalid: give exactly one (discrete or continuous time)")
        if self.transition is not None:
            P = _square("transition", self.transition, k)
            if P.min() < 0:
                i, j = np.unravel_index(int(np.argmin(P)), P.shape)
                raise ValueError(f"transition[{i}, {j}]={float(P[i, j])!r} is invalid: must be a probability >= 0")
            rows = P.sum(axis=1)
            bad = np.flatnonzero(np.abs(rows - 1.0) > ROW_SUM_TOL)
            if bad.size:
                i = int(bad[0])
                raise ValueError(f"transition[{i}] (row sum {float(rows[i])!r}) is invalid: every row must sum to 1 "
                                 f"(tolerance {ROW_SUM_TOL:g})")
            if self.epoch is None:
                raise ValueError("epoch=None is invalid: a discrete-time model needs its epoch length "
                                 "(time units per transition)")
            s("epoch", check_real("epoch", self.epoch, 0.0, low_open=True))
            _check_irreducible("transition", P > 0)
            s("transition", _readonly(P))
        else:
            Q = _square("generator", self.generator, k)
            off = Q - np.diag(np.diag(Q))
            if off.min() < 0:
                i, j = np.unravel_index(int(np.argmin(off)), Q.shape)
                raise ValueError(f"generator[{i}, {j}]={float(Q[i, j])!r} is invalid: off-diagonal rates must be >= 0")
            scale = max(float(np.abs(Q).max()), 1e-300)
            rows = Q.sum(axis=1)
            bad = np.flatnonzero(np.abs(rows) > GENERATOR_ROW_TOL * scale)
            if bad.size:
                i = int(bad[0])
                raise ValueError(f"generator[{i}] (row sum {float(rows[i])!r}) is invalid: every row must sum to 0")
            if self.epoch is not None:
                raise ValueError(f"epoch={self.epoch!r} is invalid: a continuous-time model has no epoch; "
                                 "use discretize(epoch)")
            Q = off - np.diag(off.sum(axis=1))
            _check_irreducible("generator", off > 0)
            s("generator", _readonly(Q))
        if self.time_unit is not None:
            s("time_unit", check_real("time_unit", self.time_unit, 0.0, low_open=True))
        if self.packet_bytes is not None:
            s("packet_bytes", check_int("packet_bytes", self.packet_bytes, 1))
        if not self.mean > 0:
            raise ValueError(f"levels={c.tolist()} is invalid: the stationary mean capacity is 0 (the link never "
                             "serves); at least one visited level must be > 0")

    # ------------------------------------------------------------------ basics
    @property
    def n_levels(self) -> int:
        """K, the number of levels."""
        return int(self.levels.size)

    @property
    def time(self) -> str:
        """``"discrete"`` (transition matrix per epoch) or ``"continuous"`` (generator)."""
        return "discrete" if self.transition is not None else "continuous"

    @property
    def stationary(self) -> np.ndarray:
        """Stationary distribution :math:`\\pi` (read-only array)."""
        if "pi" not in self._cache:
            if self.transition is not None:
                pi = stationary_distribution(self.transition)
            else:
                q = float(np.max(-np.diag(self.generator)))
                # uniformisation: P = I + Q/q has the same stationary distribution
                pi = stationary_distribution(np.eye(self.n_levels) + self.generator / q) if q > 0 else np.ones(1)
            self._cache["pi"] = _readonly(pi)
        return self._cache["pi"]

    @property
    def mean(self) -> float:
        """Stationary mean capacity :math:`\\pi c`, packets per time unit."""
        return float(self.stationary @ self.levels)

    @property
    def has_outage(self) -> bool:
        """True when some level is 0."""
        return bool(np.any(self.levels == 0.0))

    @property
    def bits_per_second(self) -> np.ndarray:
        """Levels in bits per second (needs ``packet_bytes`` and ``time_unit``)."""
        if self.packet_bytes is None or self.time_unit is None:
            raise ValueError("packet_bytes/time_unit is invalid: both are needed to express levels in bits/s "
                             f"(packet_bytes={self.packet_bytes!r}, time_unit={self.time_unit!r})")
        return _readonly(self.levels * self.packet_bytes * 8.0 / self.time_unit)

    def require_no_outage(self, what: str) -> None:
        """Raise ``ValueError`` if a level is 0, for a consumer ``what`` that cannot carry outages."""
        if self.has_outage:
            i = int(np.flatnonzero(self.levels == 0.0)[0])
            raise ValueError(f"levels[{i}]=0.0 is invalid for {what}: it cannot carry an outage (a level of 0); "
                             "use the closed forms or the simulator, or fit without outages")

    def chain_per_epoch(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(P, C, epoch)``: the slotted server of eq. (23), ``C = levels * epoch`` packets per slot.

        Raises ``ValueError`` for a continuous-time model (discretize it first).
        """
        if self.transition is None:
            raise ValueError("time='continuous' is invalid here: the slotted formulas (eqs. 23-25) need a "
                             "discrete-time model; use model.discretize(epoch)")
        return np.array(self.transition), self.levels * self.epoch, float(self.epoch)

    # ------------------------------------------------------------------ conversions
    def discretize(self, epoch: float) -> "CapacityModel":
        """The continuous-time chain sampled every ``epoch`` time units: ``P = expm(Q epoch)``."""
        from scipy.linalg import expm

        if self.generator is None:
            raise ValueError("time='discrete' is invalid here: the model is already discrete")
        epoch = check_real("epoch", epoch, 0.0, low_open=True)
        P = np.clip(expm(self.generator * epoch), 0.0, None)
        return CapacityModel(self.levels, transition=P / P.sum(axis=1, keepdims=True), epoch=epoch,
                             time_unit=self.time_unit, packet_bytes=self.packet_bytes)

    def to_generator(self) -> "CapacityModel":
        """Continuous-time model whose epoch sampling is this chain (``Q = logm(P) / epoch``).

        Raises :class:`~tcpabr_model.errors.ModelError` when ``P`` has no valid generator
        (a real ``logm`` with non-negative off-diagonal entries), e.g. when it is periodic
        or switches with probability >= 1/2 per epoch.
        """
        from scipy.linalg import logm

        if self.transition is None:
            return self
        with np.errstate(all="ignore"):
            L = logm(self.transition)
        L = np.asarray(L)
        scale = max(float(np.abs(L).max()) if np.all(np.isfinite(L)) else np.inf, 1e-300)
        if not np.all(np.isfinite(L)) or np.abs(L.imag).max() > 1e-9 * scale:
            raise ModelError("transition has no real matrix logarithm: no continuous-time chain is sampled as "
                             "this one (embedding problem)")
        Q = L.real / self.epoch
        off = Q - np.diag(np.diag(Q))
        if off.min() < -1e-9 * scale / self.epoch:
            raise ModelError(f"logm(transition) has a negative off-diagonal rate {off.min():.3g}: no "
                             "continuous-time chain is sampled as this one (embedding problem)")
        off = np.clip(off, 0.0, None)
        return CapacityModel(self.levels, generator=off - np.diag(off.sum(axis=1)),
                             time_unit=self.time_unit, packet_bytes=self.packet_bytes)

    # ------------------------------------------------------------------ comparison, export
    def to_dict(self) -> dict:
        """Plain-Python description (the payload of :func:`save_model`)."""
        d = {"levels": self.levels.tolist(), "time": self.time}
        if self.transition is not None:
            d["transition"] = self.transition.tolist()
            d["epoch"] = self.epoch
        else:
            d["generator"] = self.generator.tolist()
        if self.time_unit is not None:
            d["time_unit"] = self.time_unit
        if self.packet_bytes is not None:
            d["packet_bytes"] = self.packet_bytes
        return d

    def __eq__(self, other):
        if not isinstance(other, CapacityModel):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # mutable-free but array-valued: compare with ==, do not hash

    def __repr__(self):
        m = self.transition if self.transition is not None else self.generator
        what = f"transition={m.tolist()}, epoch={self.epoch}" if self.time == "discrete" else f"generator={m.tolist()}"
        return (f"CapacityModel(levels={self.levels.tolist()}, {what}, time_unit={self.time_unit}, "
                f"packet_bytes={self.packet_bytes})")


# ---------------------------------------------------------------------- constructors
def two_state(rate_ratio, psi, delta, *, high_rate=1.0, time="discrete", time_unit=None,
              packet_bytes=None) -> CapacityModel:
    """The paper's symmetric two-state chain (seed 004, Sections III-B and V).

    State 0 is the high rate ``high_rate`` (1 packet per time unit in the paper's units),
    state 1 the low rate ``rate_ratio * high_rate``.  The mean time in each state is
    ``tau = psi * delta`` time units.

    Parameters
    ----------
    rate_ratio : float in (0, 1]
        Low rate over high rate.
    psi : float
        tau / Delta; >= 1 for ``time="discrete"`` (switch probability ``1/psi`` per epoch
        of length ``delta``, as the Markov engine uses it), > 0 for ``"continuous"``
        (exponential sojourns of mean ``psi * delta``, as the simulator's continuous mode).
    delta : float > 0
        Round-trip propagation delay Delta in time units (the epoch of the embedded chain).
    high_rate : float > 0, optional(default=1.0)
    time : {"discrete", "continuous"}, optional(default="discrete")
    time_unit, packet_bytes : optional
        See :class:`CapacityModel`.
    """
    rr = check_real("rate_ratio", rate_ratio, 0.0, 1.0, low_open=True)
    check_choice("time", time, ("discrete", "continuous"))
    delta = check_real("delta", delta, 0.0, low_open=True)
    hi = check_real("high_rate", high_rate, 0.0, low_open=True)
    levels = [hi, hi * rr]
    if time == "discrete":
        psi = check_real("psi", psi, 1.0, MAX_PSI)
        p = 1.0 / psi
        return CapacityModel(levels, transition=[[1.0 - p, p], [p, 1.0 - p]], epoch=delta,
                             time_unit=time_unit, packet_bytes=packet_bytes)
    psi = check_real("psi", psi, 0.0, MAX_PSI, low_open=True)
    q = 1.0 / (psi * delta)
    return CapacityModel(levels, generator=[[-q, q], [q, -q]], time_unit=time_unit, packet_bytes=packet_bytes)


def constant(c, *, epoch=1.0, time_unit=None, packet_bytes=None) -> CapacityModel:
    """A constant capacity ``c`` > 0 packets per time unit (one level, P = [[1]])."""
    c = check_real("c", c, 0.0, low_open=True)
    return CapacityModel([c], transition=[[1.0]], epoch=epoch, time_unit=time_unit, packet_bytes=packet_bytes)


def from_arrays(levels, transition=None, *, generator=None, epoch=None, time_unit=None,
                packet_bytes=None) -> CapacityModel:
    """A model from arrays (same checks as :class:`CapacityModel`)."""
    return CapacityModel(levels, transition=transition, generator=generator, epoch=epoch,
                         time_unit=time_unit, packet_bytes=packet_bytes)

