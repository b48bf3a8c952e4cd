"""Independent Monte Carlo of the embedded Markov renewal process (X_k, T_k).

It samples the process transition by transition from the model's definitions -- the
window increment N ~ Binomial(d, 1/W) capped at W_max (eq. 10; with ``ca_increment='counter'``
the ACK counter's ``floor(U + d / W)``, docs/model.md sec. 18), the within-interval
dynamics, the loss window w = W + N + Binomial(b + J, 1/W) (alpha, eq. 11), the cycle
length 3 + ceil(log2 m) (eq. 12) and the rate chain stepped U times (eq. 13) -- and
never reads the transition matrix.  Agreement with :func:`analyze` within the
confidence interval therefore checks the enumeration, the matrix assembly and the
solvers.  It shares only the deterministic interval kernels with the skeleton.

With ``Scenario(tcp='sack')`` each loss interval is replayed to its end and the loss is
recovered by fast retransmit when ``w - L >= 3`` (a cycle of 2 or 3 round trips to
(0, 0, floor(w / 2))), else by the timeout above (docs/model.md sec. 12); the rewards are
then the sec. 12 credits (uncapped, like eq. 18 here).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from numba import njit

from .._validate import check_int
from .estimate import _kernel_args
from .kernels.interval import ceil_log2, interval_outcome
from .kernels.recovery import DUPTHRESH, loss_interval_counts
from .scenario import Scenario

__all__ = ["EmbeddedMCResult", "simulate_embedded"]


@njit(cache=True)
def _next_level(i, pswitch, cum):
    """Level after one round trip from level ``i``: the paper's two-state chain when ``cum``
    is empty (switch with probability ``pswitch[i]``: the original random stream, kept bit
    for bit), else the first ``j`` with ``u < cum[i, j]`` (``cum[i]`` = cumulative row i of
    the K-level matrix).  One uniform either way."""
    u = np.random.random()
    if cum.shape[0] == 0:
        return 1 - i if u < pswitch[i] else i
    nlev = cum.shape[0]
    for j in range(nlev - 1):
        if u < cum[i, j]:
            return j
    return nlev - 1


@njit(cache=True)
def _growth(n, p, counter):
    """The window growth of ``n`` ACKs at ``p = 1/W``: eq. 1's coins, ``Binomial(n, p)``, or with
    ``counter`` the ACK counter at a uniform phase, ``floor(U + n p)`` (docs/model.md sec. 18)."""
    if n <= 0:
        return 0
    if counter:
        return int(math.floor(np.random.random() + n * p))
    return np.random.binomial(n, p)


@njit(cache=True)
def _run(mode, constant_s, delta, bmax, wmax, r_vals, s_vals, pswitch, cum, a0, b0, d0,
         n_cycles, burn_in, n_batches, seed, phase, fast_recovery=False, counter=False):
    """Batch sums of the embedded chain's rewards; the rate chain is drawn by
    :func:`_next_level` (two-state ``pswitch`` or K-level ``cum``)."""
    np.random.seed(seed)
    work = np.empty(int(math.floor(delta / min(r_vals.min(), s_vals.min()) + 2)) + 2 * wmax + 4)
    batch_v18 = np.zeros(n_batches)
    batch_vc = np.zeros(n_batches)
    batch_u = np.zeros(n_batches)
    batch_loss = np.zeros(n_batches)
    a, b, d, ri, si = a0, b0, d0, 0, 0
    per_batch = n_cycles // n_batches
    total = burn_in + per_batch * n_batches
    for k in range(total):
        w0 = a + b + d
        ninc = _growth(d, 1.0 / w0, counter)
        if ninc > wmax - w0:
            ninc = wmax - w0
        lost, jl, a1, b1, d1 = interval_outcome(mode, a, b, d, ninc, r_vals[ri], s_vals[si],
                                                bmax, delta, work, phase)
        if not lost:
            v18 = float(d)
            vc = float(d)
            u = 1.0
            rn = _next_level(ri, pswitch, cum)
            si = 0 if constant_s else ri
            ri = rn
            a, b, d = a1, b1, d1
        else:
            kk = _growth(b + jl, 1.0 / w0, counter)
            w = w0 + ninc + kk
            if w > wmax:
                w = wmax
            n_lost = 0
            j2 = 0
            timer_first = False
            if fast_recovery:
                _, j2, n_lost, a_left = loss_interval_counts(mode, a, b, d, ninc, r_vals[ri], s_vals[si], bmax,
                                                            delta, work, phase)
                # (M8'): the retransmission waits behind the a_left packets at the next source rate
                timer_first = a_left * s_vals[0 if constant_s else ri] > delta + 1e-9
            if fast_recovery and not timer_first and w - n_lost >= DUPTHRESH:
                # fast retransmit, PRR to ssthresh = floor(w / 2): 2 or 3 round trips (sec. 12)
                m = w // 2
                steps = 2 if j2 >= DUPTHRESH else 3
                v18 = d + b + jl + w
                vc = d + b + jl + j2
                u = float(steps)
            else:
                if timer_first and w - n_lost >= DUPTHRESH:
                    m = (w // 2 + 1) // 2   # (M8''): the recovery's window, then the timer halves it
                else:
                    m = (w + 1) // 2
                c = ceil_log2(m)
                ss = float((1 << c) - 1)
                v18 = d + b + jl + w + ss
                vc = d + b + ss
                u = 3.0 + c
                steps = 3 + c
            prev = ri
            cur = ri
            for _ in range(steps):
                prev = cur
                cur = _next_level(cur, pswitch, cum)
            ri = cur
            si = 0 if constant_s else prev
            a, b, d = 0, 0, m
        if k >= burn_in:
            j = (k - burn_in) // per_batch
            batch_v18[j] += v18
            batch_vc[j] += vc
            batch_u[j] += u
            if lost:
                batch_loss[j] += 1.0
    return batch_v18, batch_vc, batch_u, batch_loss


@dataclass(frozen=True)
class EmbeddedMCResult:
    """Batch-means estimates of the eq. 18 and conservative efficiencies (95% CI)."""

    optimistic_eq18: float
    optimistic_eq18_halfwidth: float
    conservative: float
    conservative_halfwidth: float
    loss_fraction: float
    n_cycles: int
    n_batches: int
    seed: int

    def to_dict(self) -> dict:
        return asdict(self)


def simulate_embedded(scenario: Scenario, n_cycles: int = 200_000, seed: int = 1,
                      n_batches: int = 20, burn_in: int = 2_000) -> EmbeddedMCResult:
    """Sample ``n_cycles`` Markov renewal cycles of ``scenario`` (same seed -> same numbers).

    With ``scenario.capacity`` the rate chain is stepped with its K x K matrix per round
    trip (:attr:`Scenario.rate_matrix`), by inversion of each row's cumulative law.
    """
    n_cycles = check_int("n_cycles", n_cycles, 1000, 10**10)
    n_batches = check_int("n_batches", n_batches, 2, 10_000)
    burn_in = check_int("burn_in", burn_in, 0, 10**9)
    seed = check_int("seed", seed, 0, 2**31 - 1)
    if scenario.service is not None or scenario.switch_time != "epoch":
        raise ValueError("scenario is invalid here: the embedded Monte Carlo samples levels served at constant "
                         "rates (no service patterns, switch_time='epoch')")
    # the engine's own kernel arguments: the service times, and the source's spacing per level (a constant
    # source, INSTCAP's max(c_S, mcr), EFFCAP's eq. 28 of the history, docs/model.md sec. 20)
    mode, constant_s, _, _, _, r_vals, s_vals, a0, b0, d0 = _kernel_args(scenario.structure_key())
    phase = 1.0 if scenario.ack_clock == "after-service" else 0.0
    if scenario.ack_clock == "spread":   # docs/model.md sec. 3a: every d >= 1 has d s > Delta, so g = Delta / d
        s_vals = np.full(r_vals.size, float(scenario.epoch) + 1.0)
    if scenario.capacity is None and scenario.feedback != "effcap":  # the paper's chain (same stream as before K levels)
        pswitch, cum = np.array([scenario.p_switch, scenario.p_switch]), np.empty((0, 0))
    else:
        pswitch, cum = np.empty(0), np.cumsum(scenario.rate_matrix, axis=1)
    v18, vc, u, nloss = _run(mode, constant_s, float(scenario.epoch), scenario.buffer_capacity, scenario.wmax,
                             r_vals, s_vals, pswitch, cum, a0, b0, d0, n_cycles, burn_in, n_batches, seed, phase,
                             scenario.tcp == "sack", scenario.ca_increment == "counter")
    from scipy import stats

    scale = scenario.epoch * scenario.mean_capacity
    tq = stats.t.ppf(0.975, n_batches - 1)

    def ratio_ci(v):
        est = v.sum() / u.sum() / scale
        per = v / u / scale
        return float(est), float(tq * per.std(ddof=1) / math.sqrt(n_batches))

    o, oh = ratio_ci(v18)
    c, ch = ratio_ci(vc)
    return EmbeddedMCResult(o, oh, c, ch, float(nloss.sum() / (n_cycles // n_batches * n_batches)),
                            n_cycles, n_batches, seed)
