r"""Finite-sample effective-capacity estimators and the EFFCAP rule (seed 004, eqs. 24-28).

With measurement interval :math:`s`, the samples :math:`C_1, C_2, \dots` are the capacities
(packets per measurement interval, or any rate unit) seen in successive intervals.

* eq. (24): :math:`\Gamma \approx -\frac{1}{M\delta}\log E\exp(-\delta\sum_{i=1}^M C_i)`;
* eq. (25): the expectation replaced by the average over :math:`N` blocks of :math:`M` samples,
  :math:`\hat\Gamma_{M,N}(\delta) = -\frac{1}{M\delta}\log\frac1N\sum_{j=1}^N
  e^{-\delta S_j}`, :math:`S_j = \sum_{i=1}^M C_{ij}`;
* eq. (26): the same split as :math:`-\frac{1}{M\delta}\log\frac1N -
  \frac{1}{M\delta}\log\sum_j e^{-\delta S_j}` (returned by :func:`effcap_eq26_terms`);
* eqs. (27)-(28): :math:`\delta\to\infty` gives EFFCAP, :math:`\min_j S_j / M`, the minimum of
  the N block averages.

All functions work in units of the samples (the estimate of eq. 23 *per sample*, i.e. per
measurement interval, when the samples are packets per interval).  Eq. (25) is evaluated
with log-sum-exp (shift by :math:`\min_j S_j`) so it is exact in floating point for any
delta, and it tends to eq. (28) from above as delta grows:
:math:`0 \le \hat\Gamma_{M,N}(\delta) - \min_j S_j/M \le \log N /(M\delta)`.

Capacity models: :func:`effcap_estimate` also takes a
:class:`~tcpabr_model.capacity.CapacityModel` in place of the samples and returns the
value eq. (25) estimates, eq. (24) exactly under the stationary chain (the N -> infinity
limit; :func:`~tcpabr_model.closed_forms.effective_capacity_eq24`), in packets per time
unit; :func:`effcap_design` takes a model in place of ``s`` (the measurement interval is the
model's epoch).

Blocks: ``sliding=False`` uses disjoint consecutive blocks; ``sliding=True`` uses the
blocks starting at every sample (the paper's Fig. 7: "N sliding blocks"; the paper notes
the N intervals need not be disjoint).  The estimators use the **last** N blocks of the
sample array (the most recent history), or all blocks when ``N`` is None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._validate import as_float_array, check_int, check_real
from .chain_effective_capacity import effective_capacity_eq24
from .modulating_chain import _is_model

__all__ = [
    "block_sums",
    "effcap_estimate",
    "effcap_eq24",
    "effcap_eq26_terms",
    "effcap_min_block_average",
    "effcap_feedback_series",
    "EffcapDesign",
    "effcap_design",
]


def _samples(samples, name: str = "samples") -> np.ndarray:
    x = as_float_array(name, samples)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name}.shape={x.shape} is invalid: must be a non-empty 1-D array")
    if not np.all(np.isfinite(x)):
        i = int(np.argmin(np.isfinite(x)))
        raise ValueError(f"{name}[{i}]={float(x[i])!r} is invalid: every sample must be finite")
    return np.ascontiguousarray(x)


def block_sums(samples, M, N=None, *, sliding=False) -> np.ndarray:
    """Sums :math:`S_j = \\sum_{i=1}^M C_{ij}` of the last ``N`` blocks of ``M`` samples.

    Parameters
    ----------
    samples : array_like(float, ndim=1)
    M : int >= 1
        Samples per block.
    N : int >= 1, optional(default=None: all blocks that fit)
    sliding : bool, optional(default=False)
        Blocks start at every sample (overlapping) instead of every M samples.
    """
    x = _samples(samples)
    M = check_int("M", M, 1)
    if M > x.size:
        raise ValueError(f"M={M} is invalid: must be <= the number of samples ({x.size})")
    if sliding:
        cs = np.concatenate(([0.0], np.cumsum(x)))
        S = cs[M:] - cs[:-M]
    else:
        nb = x.size // M
        start = x.size - nb * M  # keep the most recent samples
        S = x[start:].reshape(nb, M).sum(axis=1)
    if N is not None:
        N = check_int("N", N, 1)
        if N > S.size:
            raise ValueError(f"N={N} is invalid: only {S.size} blocks of M={M} samples are available")
        S = S[-N:]
    return S


def _check_delta(delta) -> float:
    return check_real("delta", delta, 0.0, low_open=True, allow_inf=True)


def effcap_estimate(samples, M, delta, N=None, *, sliding=False) -> float:
    """Eq. (25): :math:`-\\frac{1}{M\\delta}\\log\\frac1N\\sum_j e^{-\\delta S_j}`.

    Parameters
    ----------
    samples : array_like(float, ndim=1) or CapacityModel
        Capacity samples :math:`C_i` (one per measurement interval), or a discrete-time
        model: then the expectation of eq. (24) under its stationary chain (N must be
        None; M counts epochs; the result is in packets per time unit).
    M : int >= 1
        Samples per block.
    delta : float > 0
        QoS exponent in 1/(sample unit); ``inf`` gives eq. (28).
    N : int, optional
        Number of (most recent) blocks; default all.
    sliding : bool, optional(default=False)

    Returns
    -------
    float
        Estimate of the effective capacity per sample interval.
    """
    delta = _check_delta(delta)
    if _is_model(samples):
        if N is not None:
            raise ValueError(f"N={N!r} is invalid with a CapacityModel: the model gives the expectation over "
                             "all blocks (N -> infinity), eq. 24")
        return effective_capacity_eq24(samples, delta, check_int("M", M, 1))
    S = block_sums(samples, M, N, sliding=sliding)
    smin = S.min()
    if math.isinf(delta):
        return float(smin / M)
    lse = np.log(np.mean(np.exp(-delta * (S - smin))))
    return float(smin / M - lse / (M * delta))


def effcap_eq24(block_sum_samples, M, delta) -> float:
    """Eq. (24) with the expectation given by samples of :math:`\\sum_{i=1}^M C_i`.

    ``block_sum_samples`` are independent (or stationary) draws of the M-sample sum, e.g.
    from many replications; the result is :math:`-\\log(\\overline{e^{-\\delta S}})/(M\\delta)`.
    """
    S = _samples(block_sum_samples, "block_sum_samples")
    M = check_int("M", M, 1)
    delta = _check_delta(delta)
    smin = S.min()
    if math.isinf(delta):
        return float(smin / M)
    return float(smin / M - np.log(np.mean(np.exp(-delta * (S - smin)))) / (M * delta))


def effcap_eq26_terms(samples, M, delta, N=None, *, sliding=False) -> tuple[float, float]:
    """The two terms of eq. (26): ``(-log(1/N)/(M delta), -log(sum_j exp(-delta S_j))/(M delta))``.

    Their sum is eq. (25).  The first term, :math:`\\log N/(M\\delta)`, is the bias that
    vanishes as delta -> inf (eq. 27).
    """
    delta = check_real("delta", delta, 0.0, low_open=True)
    S = block_sums(samples, M, N, sliding=sliding)
    n = S.size
    smin = S.min()
    t2 = smin / M - np.log(np.sum(np.exp(-delta * (S - smin)))) / (M * delta)
    return float(math.log(n) / (M * delta)), float(t2)


def effcap_min_block_average(samples, M, N=None, *, sliding=True) -> float:
    """EFFCAP, eq. (28): :math:`\\min_{j\\le N} \\frac1M\\sum_{i=1}^M C_{ij}` over the last N blocks.

    Default ``sliding=True`` (the paper's sliding blocks, Fig. 7).
    """
    S = block_sums(samples, M, N, sliding=sliding)
    return float(S.min() / M)


@njit(cache=True)
def _rolling_min_of_means_jit(x, M, N, out):
    """out[t] = min over the N block means ending at t, t-1, ..., t-N+1 (sliding, step 1).

    Monotone-deque rolling minimum over the rolling means; O(len(x)).  Entries before
    M + N - 1 samples are available are NaN.  Block sums are kept as running sums that
    are recomputed exactly every 4096 samples to bound rounding drift.
    """
    n = x.size
    q = np.empty(n, np.int64)  # deque of block-end indices
    vals = np.empty(n)  # block means by end index
    head = 0
    tail = 0
    s = 0.0
    for t in range(n):
        s += x[t]
        if t >= M:
            s -= x[t - M]
        if t % 4096 == 0 and t >= M - 1:
            s = 0.0
            for k in range(t - M + 1, t + 1):
                s += x[k]
        if t < M - 1:
            out[t] = np.nan
            continue
        v = s / M
        vals[t] = v
        while tail > head and vals[q[tail - 1]] >= v:
            tail -= 1
        q[tail] = t
        tail += 1
        while q[head] <= t - N:
            head += 1
        if t >= M + N - 2:
            out[t] = vals[q[head]]
        else:
            out[t] = np.nan


def effcap_feedback_series(samples, M, N, mcr: float = 0.0) -> np.ndarray:
    """EFFCAP feedback at every measurement epoch: eq. (28) on a sliding history.

    ``out[t]`` is the minimum of the N most recent sliding M-sample averages available at
    sample t (NaN while fewer than M + N - 1 samples exist), i.e. what a switch running
    EFFCAP(M, N) would feed back after sample t.  Linear time (numba, monotone deque).
    ``mcr`` (the samples' unit, >= 0): the source's TM 4.0 minimum cell rate, the rate it
    is allowed is ``max(out[t], mcr)``; 0 (TM 4.0's default) leaves eq. (28) as it is.
    """
    x = _samples(samples)
    M = check_int("M", M, 1)
    N = check_int("N", N, 1)
    mcr = check_real("mcr", mcr, 0.0)
    out = np.empty_like(x)
    _rolling_min_of_means_jit(x, M, N, out)
    if mcr > 0.0:
        out = np.where(np.isnan(out), out, np.maximum(out, mcr))
    return out


@dataclass(frozen=True)
class EffcapDesign:
    """EFFCAP parameters from the paper's design rule (seed 004, Section VI).

    Attributes
    ----------
    M : int
        Samples per average, :math:`\\lceil\\Delta/s\\rceil` ("M : Delta").
    N : int
        Number of averages for memory ``k`` RTTs.
    k : int
        Memory in round-trip times ("N : k Delta").
    N_range : tuple(int, int)
        N for k = 8 and k = 12 (the recommended range) in the same convention.
    convention : str
    """

    M: int
    N: int
    k: int
    N_range: tuple[int, int]
    convention: str


#: Largest delta / s accepted by :func:`effcap_design` (M beyond it is no usable design).
_MAX_INTERVALS = 1e12


def effcap_design(delta, s, k=8, *, convention="memory") -> EffcapDesign:
    """M and N of the EFFCAP design rule for round-trip time ``delta`` and interval ``s``.

    Parameters
    ----------
    delta : float > 0
        Round-trip propagation delay :math:`\\Delta` (any time unit).
    s : float > 0 or CapacityModel
        Measurement (and feedback) interval, same unit; a discrete-time model gives its
        epoch (then ``delta`` is in the model's time units).
    k : int >= 2, optional(default=8)
        Memory in RTTs; the paper recommends 8 to 12.
    convention : {"memory", "count"}, optional(default="memory")
        ``"memory"`` (default): ``N = (k - 1) * M``, the paper's definition of "N : k Delta"
        and every worked example (Delta=200 ms, s=30 ms, k=8 -> M=7, N=49; Section VII:
        M=8, N=88 and M=12, N=132 for k=12).  ``"count"``: ``N = k * M``, the literal reading
        of "N in the range 8 ceil(Delta/s) to 12 ceil(Delta/s)" in Section VI.

    Notes
    -----
    :math:`\\lceil\\Delta/s\\rceil` is computed with a relative guard of 1e-9 so that e.g.
    240/30 gives 8, not 9, despite rounding.
    """
    d = check_real("delta", delta, 0.0, low_open=True)
    if _is_model(s):
        s = s.chain_per_epoch()[2]
    ss = check_real("s", s, 0.0, low_open=True)
    k = check_int("k", k, 2)
    if convention not in ("memory", "count"):
        raise ValueError(f"convention={convention!r} is invalid: must be one of 'memory', 'count'")
    ratio = d / ss
    if not ratio <= _MAX_INTERVALS:  # also catches delta / s overflowing to inf
        raise ValueError(f"delta/s={ratio!r} is invalid: the round trip must span at most "
                         f"{_MAX_INTERVALS:.0e} measurement intervals (delta={d!r}, s={ss!r})")
    M = max(1, int(math.ceil(ratio * (1.0 - 1e-9))))

    def n_of(kk):
        return (kk - 1) * M if convention == "memory" else kk * M

    return EffcapDesign(M=M, N=n_of(k), k=k, N_range=(n_of(8), n_of(12)), convention=convention)
