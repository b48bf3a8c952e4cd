r"""Measured link traces in Mahimahi format: read, check, bin, write, synthesise.

Mahimahi format (K. Winstein et al., NSDI 2013; the ``mm-link`` emulator): one integer per
line, a time in milliseconds; each line is one opportunity to deliver one packet of
``packet_bytes`` (1500) bytes; equal times mean several packets in that millisecond.
Times must be non-decreasing.  The trace **repeats** with period :math:`T` = the last time
(``mm-link`` adds the last timestamp to its base time each time it wraps), so a line at
time 0 and a line at time :math:`T` are the same instant modulo the period.

Binning (:func:`bin_trace`), a CHOICE consistent with that period: epoch ``k`` is the
interval :math:`(k\epsilon, (k+1)\epsilon]` of the cycle :math:`(0, T]`; a line at time
:math:`t` is counted in epoch :math:`\lceil t'/\epsilon\rceil - 1` with
:math:`t' = ((t - 1) \bmod T) + 1` (so 0 counts as :math:`T`).  Only the
:math:`\lfloor T/\epsilon\rfloor` whole epochs are kept; the opportunities of a final
partial epoch are dropped and counted in :attr:`BinnedTrace.dropped`.  The capacity of an
epoch is its count over its length, packets per second.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._validate import check_int, check_real
from ..closed_forms import effcap_estimate
from ._io import read_bytes
from ._model import CapacityModel

__all__ = ["Trace", "BinnedTrace", "read_trace", "write_trace", "bin_trace", "synthetic_trace", "chain_path",
           "MAHIMAHI_PACKET_BYTES"]

#: bytes per delivery opportunity in Mahimahi traces
MAHIMAHI_PACKET_BYTES = 1500


@dataclass(frozen=True, eq=False)
class Trace:
    """Delivery opportunities of a link (Mahimahi semantics; immutable).

    Attributes
    ----------
    times_ms : ndarray(int64, ndim=1)
        Non-decreasing opportunity times in ms (read-only).
    name : str
        Where it came from (file name, or a description).
    packet_bytes : int
        Bytes per opportunity (1500 for Mahimahi).
    """

    times_ms: np.ndarray
    name: str = "<trace>"
    packet_bytes: int = MAHIMAHI_PACKET_BYTES

    def __post_init__(self):
        t = np.array(self.times_ms, dtype=np.int64)
        _check_times(t, self.name)
        t.setflags(write=False)
        object.__setattr__(self, "times_ms", t)
        object.__setattr__(self, "packet_bytes", check_int("packet_bytes", self.packet_bytes, 1))

    @property
    def period_ms(self) -> int:
        """Repetition period T = the last time (ms)."""
        return int(self.times_ms[-1])

    @property
    def n_opportunities(self) -> int:
        """Lines of the trace (delivery opportunities per period)."""
        return int(self.times_ms.size)

    @property
    def mean_rate(self) -> float:
        """Mean capacity over one period, packets per second."""
        return self.n_opportunities / (self.period_ms / 1000.0)

    @property
    def mean_bits_per_second(self) -> float:
        """Mean capacity over one period, bits per second (``packet_bytes`` per opportunity)."""
        return self.mean_rate * self.packet_bytes * 8.0

    @cached_property
    def longest_gap(self) -> tuple[float, float]:
        """``(length, start)`` in seconds of the longest stretch without a delivery opportunity,
        over the repeating cycle.

        In the 1-ms bins of :func:`bin_trace` (bin ``k`` is ``(k, k+1]`` ms, a line at 0
        counting as ``T``) it is the longest run of empty bins, the run across the wrap
        included; ``start`` is where it begins, ms into the period / 1000.  0 when every ms
        holds an opportunity.  (A replay serves nothing for that long: ``docs/traces.md``,
        section 3.)
        """
        T = self.period_ms
        b = np.unique((self.times_ms - 1) % T)     # occupied bins; the last time T is bin T - 1
        runs = np.diff(b) - 1                      # empty bins b[i] + 1 .. b[i+1] - 1
        i = int(np.argmax(runs)) if runs.size else -1
        if i < 0 or b[0] >= runs[i]:               # the run across the wrap: bins 0 .. b[0] - 1
            return float(b[0]) / 1000.0, 0.0
        return float(runs[i]) / 1000.0, float(b[i] + 1) / 1000.0


#: a stretch without any delivery opportunity at least this long (seconds) is named by ``trace fit`` and
#: ``analyze --trace`` (``simulate`` refuses a measured window shorter than it)
LONG_GAP_SECONDS = 60.0


def long_gap_note(trace: Trace) -> str | None:
    """A one-line note on the trace's longest stretch without a delivery opportunity
    (:attr:`Trace.longest_gap`) where it lasts at least :data:`LONG_GAP_SECONDS`, else None: a fit counts
    it as one outage of that length, which is right for a link that was down and wrong for a gap in
    the capture."""
    gap, start = trace.longest_gap
    if gap < LONG_GAP_SECONDS:
        return None
    period = trace.period_ms / 1000.0
    return (f"{trace.name} has no delivery opportunity for {gap:.0f} s (from {start:g} s, {100 * gap / period:.1f} % "
            f"of its {period:.0f}-s period): the fit takes it as an outage of that length; if the link was not down "
            "then (a gap in the capture), cut it out of the trace")


def _check_times(t: np.ndarray, name: str) -> None:
    """Refuse an empty, negative, decreasing or zero-period array (line numbers 1-based)."""
    if t.ndim != 1 or t.size == 0:
        raise ValueError(f"{name}: the trace is empty: a Mahimahi trace needs at least one line")
    neg = np.flatnonzero(t < 0)
    if neg.size:
        i = int(neg[0])
        raise ValueError(f"{name}: line {i + 1}: {int(t[i])} is invalid: times must be integers >= 0 (ms)")
    dec = np.flatnonzero(np.diff(t) < 0)
    if dec.size:
        i = int(dec[0]) + 1
        raise ValueError(f"{name}: line {i + 1}: {int(t[i])} is invalid: times must be non-decreasing "
                         f"(previous line {i}: {int(t[i - 1])})")
    if t[-1] <= 0:
        raise ValueError(f"{name}: line {t.size}: the last time is 0 ms: the trace needs a positive period "
                         "(its last time)")


def _bad_line(lines, name):
    for i, ln in enumerate(lines):
        s = ln.strip()
        if not s.isdigit():
            shown = ln.decode("utf-8", "replace").strip()
            what = "a negative value" if s[:1] == b"-" and s[1:].isdigit() else "not an integer"
            raise ValueError(f"{name}: line {i + 1}: {shown!r} is invalid: {what}; each line must be one "
                             "integer time >= 0 in ms")


def _short(value) -> str:
    """``repr(value)`` cut to one short line (an array passed where a path belongs)."""
    import reprlib

    return " ".join(reprlib.repr(value).split())


def read_trace(path, *, packet_bytes: int = MAHIMAHI_PACKET_BYTES) -> Trace:
    """Read and check a Mahimahi trace file.

    Raises ``ValueError`` naming the file and the (1-based) line for an empty file, a line
    that is not a non-negative integer (blank lines inside the file included), or a time
    smaller than the previous one; naming ``path`` when it is not a path.
    """
    if not isinstance(path, (str, bytes, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"path={_short(path)} is invalid: must be the path (str or os.PathLike) of a Mahimahi "
                         "trace file")
    name = os.fspath(path)
    data = read_bytes(path, "the trace")
    lines = data.split(b"\n")
    if lines and lines[-1].strip() == b"":
        lines.pop()  # final newline
    if not any(ln.strip() for ln in lines):
        raise ValueError(f"{name}: the trace is empty: a Mahimahi trace needs at least one line")
    if data.translate(None, b"0123456789 \t\r\n"):  # a sign, a dot, a letter, an underscore...
        _bad_line(lines, name)
    try:
        t = np.array(lines, dtype=np.int64)  # digits with surrounding blanks only, by now
    except (ValueError, OverflowError):
        _bad_line(lines, name)  # a blank line, or "2 3"
        raise ValueError(f"{name}: a time does not fit in 64 bits") from None
    return Trace(t, name=name, packet_bytes=packet_bytes)


def write_trace(trace: Trace, path) -> None:
    """Write ``trace`` in Mahimahi format (one time in ms per line)."""
    if not isinstance(trace, Trace):
        raise ValueError(f"trace={trace!r} is invalid: must be a Trace")
    from ..runtime.atomic import write_text

    write_text(path, "\n".join(map(str, trace.times_ms.tolist())) + "\n", encoding="ascii")


@dataclass(frozen=True, eq=False)
class BinnedTrace:
    """Opportunities per epoch of one trace period.

    Attributes
    ----------
    counts : ndarray(int64)
        Opportunities in each whole epoch (packets per epoch).
    epoch : float
        Epoch length, seconds.
    dropped : int
        Opportunities in the final partial epoch, not counted.
    packet_bytes : int
    """

    counts: np.ndarray
    epoch: float
    dropped: int
    packet_bytes: int

    @property
    def rates(self) -> np.ndarray:
        """Capacity per epoch, packets per second."""
        return self.counts / self.epoch

    @property
    def n_epochs(self) -> int:
        """Whole epochs kept."""
        return int(self.counts.size)

    def block_counts(self, M: int) -> np.ndarray:
        """Counts with the first ``M - 1`` epochs appended: its sliding blocks of ``M`` are the
        ``n_epochs`` cyclic blocks of the repeating trace."""
        M = check_int("M", M, 1, self.n_epochs)
        return np.concatenate([self.counts, self.counts[: M - 1]]).astype(float)

    def effective_capacity(self, M: int, delta: float) -> float:
        """Empirical effective capacity, eq. (25), packets per second.

        All ``n_epochs`` cyclic sliding blocks of ``M`` epochs
        (:func:`~tcpabr_model.closed_forms.effcap_estimate`); ``delta`` per packet, ``inf``
        gives EFFCAP's eq. (28), the smallest block average.
        """
        return effcap_estimate(self.block_counts(M), M, delta, sliding=True) / self.epoch


def bin_trace(trace: Trace, epoch: float) -> BinnedTrace:
    """Count the opportunities per epoch of ``epoch`` seconds (see the module docstring)."""
    if not isinstance(trace, Trace):
        raise ValueError(f"trace={trace!r} is invalid: must be a Trace")
    # the trace's times are whole milliseconds (Mahimahi's format): a shorter epoch would cut a
    # millisecond's opportunities apart and count empty epochs that the link never had
    epoch = check_real("epoch", epoch, 0.0, low_open=True)
    if epoch < 0.001:
        raise ValueError(f"epoch={epoch!r} is invalid: must be >= 0.001 s, the trace's resolution (its times "
                         "are whole milliseconds)")
    e_ms = epoch * 1000.0
    T = trace.period_ms
    n = int(math.floor(T / e_ms * (1.0 + 1e-12)))
    if n < 1:
        raise ValueError(f"epoch={epoch!r} is invalid: must be at most the trace period {T / 1000.0} s "
                         f"of {trace.name}")
    u = (trace.times_ms - 1) % T + 1  # (0, T]; 0 counts as T
    idx = np.ceil(u / e_ms * (1.0 - 1e-12)).astype(np.int64) - 1
    counts = np.bincount(idx, minlength=n + 1)
    return BinnedTrace(counts=counts[:n].copy(), epoch=epoch, dropped=int(counts[n:].sum()),
                       packet_bytes=trace.packet_bytes)


def chain_path(model: CapacityModel, n_epochs: int, rng: np.random.Generator) -> np.ndarray:
    """Level indices of ``n_epochs`` epochs of the discrete chain, started from its stationary law.

    One uniform per epoch from ``rng`` (inverse CDF of the row), so a path is reproducible
    from the generator's seed.
    """
    P, _, _ = model.chain_per_epoch()
    k = model.n_levels
    cdf = np.cumsum(P, axis=1)
    cdf[:, -1] = 1.0
    u = rng.random(n_epochs)
    x = np.empty(n_epochs, np.int64)
    x[0] = min(int(np.searchsorted(np.cumsum(model.stationary), u[0], side="right")), k - 1)
    for t in range(1, n_epochs):
        x[t] = min(int(np.searchsorted(cdf[x[t - 1]], u[t], side="right")), k - 1)
    return x


def trace_less_block(trace: Trace, j: int, blocks: int) -> Trace:
    """``trace`` without the ``j``-th of ``blocks`` consecutive blocks of its period, the later
    opportunities moved back to close the gap (the fits of a jackknife,
    :func:`tcpabr_model.trace_study.jackknife_link`).  Block ``j`` is the lines in ``(lo, hi]``,
    ``lo`` and ``hi`` the first opportunity times at or after ``j T / blocks`` and ``(j + 1) T /
    blocks`` (0 for the first block): a cut at a line, as :func:`~tcpabr_model.trace_study.trace_halves`,
    so the period is ``T - (hi - lo)`` and nothing is added.  **[flag]** The two sides of the gap
    meet at one seam, a change of level the trace never had."""
    blocks = check_int("blocks", blocks, 2, 1000)
    j = check_int("j", j, 0, blocks - 1)
    T = trace.period_ms
    u = np.sort((trace.times_ms - 1) % T + 1)          # (0, T]; 0 counts as T, as bin_trace reads it

    def cut(k: int) -> int:
        if k == 0:
            return 0
        return int(u[min(int(np.searchsorted(u, k * T / blocks, side="left")), u.size - 1)])

    lo, hi = cut(j), cut(j + 1)
    kept = np.concatenate([u[u <= lo], u[u > hi] - (hi - lo)])
    if kept.size == 0 or kept[-1] <= 0:
        raise ValueError(f"{trace.name}: block {j} of {blocks} holds every opportunity: nothing is left")
    return Trace(kept, name=f"{trace.name} less ({lo / 1000:g}, {hi / 1000:g}] s", packet_bytes=trace.packet_bytes)


def synthetic_trace(model: CapacityModel, n_epochs: int, seed: int, *, name: str | None = None,
                    service=None) -> Trace:
    """A trace whose epoch capacities follow a path of ``model`` (seeded, reproducible).

    The model must be discrete with ``time_unit`` set and an epoch of a whole number of
    milliseconds.  The path starts from the stationary distribution; in epoch ``k`` in
    state ``x`` the trace holds ``c_x * epoch`` opportunities (fractions carried to the
    next epoch, so binning at the model's epoch returns the levels to within one packet,
    exactly when ``c_x * epoch`` are integers), spread evenly over
    :math:`(k\\epsilon, (k+1)\\epsilon]`.  An empty final epoch gets one opportunity at its
    end so that the period is ``n_epochs * epoch``.

    ``service`` (a :class:`ServicePatterns` of the model's levels and epoch, e.g. the one
    :func:`tcpabr_model.trace_study.fit_link` fits): each epoch instead holds the
    opportunities of one pattern of its level, drawn with the pattern's weight (one more
    uniform per epoch, after the path), at their offsets rounded to whole milliseconds
    (at least 1 ms into the epoch).  That is the link the Markov renewal analysis with
    ``service`` models (docs/model.md sec. 11): simulating it measures the analysis against
    its own link, apart from how well the chain fits the measured trace.  The path is the
    one drawn without ``service`` for the same seed.

    Returns
    -------
    Trace
        With ``packet_bytes`` from the model (1500 when unset).
    """
    if not isinstance(model, CapacityModel) or model.time != "discrete":
        raise ValueError(f"model={model!r} is invalid: must be a discrete-time CapacityModel")
    if model.time_unit is None:
        raise ValueError("model.time_unit=None is invalid: a trace needs the time unit in seconds")
    n_epochs = check_int("n_epochs", n_epochs, 1, 10**8)
    seed = check_int("seed", seed, 0)
    e_ms = model.epoch * model.time_unit * 1000.0
    if abs(e_ms - round(e_ms)) > 1e-9 * max(1.0, e_ms) or round(e_ms) < 1:
        raise ValueError(f"epoch={model.epoch!r} is invalid: must be a whole number (>= 1) of milliseconds "
                         f"for a trace ({e_ms!r} ms)")
    e_ms = int(round(e_ms))
    rng = np.random.default_rng(seed)
    x = chain_path(model, n_epochs, rng)
    if service is not None:
        return _patterned_trace(model, service, x, e_ms, rng, name or f"synthetic(seed={seed}, patterns)")
    want = np.asarray(model.levels)[x] * model.epoch
    cum = np.floor(np.cumsum(want) + 1e-9).astype(np.int64)
    counts = np.diff(np.concatenate(([0], cum)))
    if counts[-1] == 0:
        counts[-1] = 1
    starts = np.repeat(np.arange(n_epochs, dtype=np.int64) * e_ms, counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    within = np.arange(first.size, dtype=np.int64) - first + 1  # 1..count inside each epoch
    per = np.repeat(counts, counts)
    times = starts + -((-within * e_ms) // per)  # ceil(i e / n) in 1..e
    return Trace(times, name=name or f"synthetic(seed={seed})",
                 packet_bytes=model.packet_bytes or MAHIMAHI_PACKET_BYTES)


def _patterned_trace(model: CapacityModel, service, x: np.ndarray, e_ms: int, rng: np.random.Generator,
                     name: str) -> Trace:
    """:func:`synthetic_trace` with ``service``: epoch ``k`` at level ``x[k]`` holds a pattern
    of that level drawn by weight, its offsets rounded to whole ms in ``[1, e_ms]``."""
    # a ServicePatterns (not imported: capacity._patterns imports this module)
    if not all(hasattr(service, a) for a in ("epoch", "offsets", "weights", "n_levels")):
        raise ValueError(f"service={service!r} is invalid: must be a ServicePatterns (or None)")
    if service.n_levels != model.n_levels:
        raise ValueError(f"service has {service.n_levels} levels: must have the model's {model.n_levels}")
    if abs(service.epoch * 1000.0 - e_ms) > 1e-6 * e_ms:
        raise ValueError(f"service.epoch={service.epoch!r} is invalid: must be the model's epoch, {e_ms / 1000.0!r} s")
    u = rng.random(x.size)
    pats = []
    for lv in range(model.n_levels):
        cdf = np.cumsum(service.weights[lv])
        cdf[-1] = 1.0
        pats.append((cdf, [np.clip(np.rint(o * 1000.0), 1, e_ms).astype(np.int64) for o in service.offsets[lv]]))
    parts = []
    for k in range(x.size):
        cdf, offs = pats[x[k]]
        o = offs[min(int(np.searchsorted(cdf, u[k], side="right")), len(offs) - 1)]
        if o.size:
            parts.append(k * e_ms + o)
    t = np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
    end = x.size * e_ms
    if t.size == 0 or t[-1] < end:
        t = np.append(t, end)     # the period is n_epochs * epoch (one opportunity added at the end)
    return Trace(t, name=name, packet_bytes=model.packet_bytes or MAHIMAHI_PACKET_BYTES)
