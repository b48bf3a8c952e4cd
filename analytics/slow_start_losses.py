"""Slow-start losses of the timeout-only TCP alone on the Fig. 8/9 grid: what the chain misses at psi 10-20.

The timer cycle's prediction (docs/model.md secs. 15, 17) is 2-10 % above the simulator at psi 10-20
for TCP alone and within a few per cent from psi 50 on.  This script measures the reason apart
(docs/validity.md, "Slow-start losses at psi 10-20"):

* the simulator's counters per point: the share of timeouts whose segment was first sent in slow
  start (``timeouts_in_slow_start / timeouts``), frames dropped and duplicate segments served per
  timeout;
* from the first replication's trace (every time unit): each slow start whose bottleneck queue
  reaches ``B_max`` (in the slow start or the round after it), split by what preceded the overflow
  in the 90 time units before it: a rate change (the ACK spacing of one level served at the
  other), a burst (the queue rising by at least 3.5 packets in one time unit, which doubled ACKs
  alone cannot do: a cumulative ACK that jumps over segments received out of order after a
  multi-drop loss lets go-back-N send a whole window at once), or neither;
* the chain's own share of failing slow starts (``Skeleton.with_slow_start_loss``, weighted by the
  stationary loss mass), and a **what-if**: the prediction when every other slow start fails in
  its last round with the probability that brings the chain's share to the simulator's
  (``what_if``).  The what-if is a diagnostic, not a model: it takes the failure share from the
  simulator.

    python analytics/slow_start_losses.py [--switch-time epoch|uniform] [--quick] [--workers 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov import skeleton as _skel
from tcpabr_model.markov.service import _service_sums
from tcpabr_model.markov.solvers import stationary_distribution
from tcpabr_model.sim import simulate
from tcpabr_model.validity import FIG89_GRID, sim_scenario

DELTA, WMAX, RATE_RATIO = 40.0, 128, 0.5
#: a one-time-unit rise of the queue that doubled ACKs cannot make (they add one packet per unit)
BURST_PACKETS = 3.5
#: time units before an overflow searched for a rate change or a burst
LOOKBACK = 90


def fail_last_round(sk, Q, q: float):
    """The timer skeleton with each loss entry's slow start failing in its last round (``L + 1``)
    with probability ``q``, as :meth:`~tcpabr_model.markov.skeleton.Skeleton.with_slow_start_loss`
    times a failure (the timer ``B_max / c + 3`` round trips later, ssthresh ``floor(m / 2)``, the
    round's credit capped at a round trip of service and a full buffer).  Entries with ``m < 4``
    are kept.  Each state's loss mass is unchanged; ``q = 0`` returns ``sk``."""
    if q <= 0.0:
        return sk
    bmax = float(sk.scenario_key[1])
    served = sk._served()
    P = _skel.rate_chain(Q, None, sk.n_levels)
    mmax = sk.reg.shape[0] - 1
    umax = 3 + int(np.ceil(np.log2(max(mmax, 1)))) + 2
    C = _service_sums(P, served, umax + 1)
    n = sk.n_states
    rows = np.repeat(np.arange(n), np.diff(sk.ls_ptr))
    ri = sk.states[rows, 3]
    m = sk.ls_m.astype(np.int64)
    L = np.frexp(np.maximum(m, 1) - 1.0)[1].astype(np.int64)            # ceil(log2 m)
    span = C[np.minimum(4 + L, umax + 1), ri] - C[3, ri]
    pipe = np.where(served[ri] >= 1.0, served[ri], np.maximum(span / (L + 1), 1e-3))
    rbar = np.minimum(1.0 / pipe, 1.0)
    new_m = np.maximum(2, m // 2)
    Lp = np.frexp(np.maximum(new_m, 1) - 1.0)[1].astype(np.int64)
    prev = 2.0 ** (L - 1)
    t_fail = L * (1 + rbar) + bmax / pipe + 3.0 + (Lp + 1) * (1 + rbar)
    t_ok = (L + 1) * (1 + rbar)
    d_u = Lp - L
    credit = (2.0 ** L - 1) + np.minimum(2 * prev, pipe + bmax) + (2.0 ** Lp - 1) - (2.0 ** L - 1)
    w = np.where(m >= 4, sk.ls_prob * q, 0.0)
    key = np.concatenate([rows * (mmax + 1) + m, rows * (mmax + 1) + np.where(m >= 4, new_m, m)])
    uk, inv = np.unique(key, return_inverse=True)
    mass = np.bincount(inv, np.concatenate([sk.ls_prob - w, w]))
    keep = mass > 0
    uk, mass = uk[keep], mass[keep]
    r2 = uk // (mmax + 1)
    ptr = np.concatenate([[0], np.cumsum(np.bincount(r2, minlength=n))]).astype(sk.ls_ptr.dtype)
    sst = sk.slow_start_time if sk.slow_start_time is not None else np.zeros(n)
    return dataclasses.replace(
        sk, ls_ptr=ptr, ls_m=(uk % (mmax + 1)).astype(sk.ls_m.dtype), ls_prob=mass,
        u=sk.u + np.bincount(rows, w * d_u, minlength=n), ss=sk.ss + np.bincount(rows, w * credit, minlength=n),
        slow_start_time=sst + np.bincount(rows, w * (t_fail - t_ok - d_u), minlength=n))


def chain_failure_share(sc: Scenario) -> float:
    """The share of the chain's loss events (stationary loss mass) whose slow start fails under
    the timer cycle's rule (docs/model.md sec. 15)."""
    sk = _skel.skeleton_for(sc)
    Q = sc.rate_matrix
    sk2 = sk.with_slow_start_loss(Q)
    pi = stationary_distribution(sk2, Q).pi
    rows = np.repeat(np.arange(sk.n_states), np.diff(sk.ls_ptr))
    mass = pi[rows] * sk.p_loss[rows] * sk.ls_prob
    return float(mass[sk2.ls_m != sk.ls_m].sum() / mass.sum()) if mass.sum() > 0 else 0.0


def what_if(sc: Scenario, share: float) -> float:
    """The timer prediction when the chain's slow starts fail at the simulator's ``share``: every
    slow start the rule passes fails in its last round with ``q = (share - f) / (1 - f)``, ``f`` the
    chain's own share (0 where the chain already fails at least as often)."""
    f = chain_failure_share(sc)
    q = max(0.0, (share - f) / (1.0 - f)) if f < 1.0 else 0.0
    base = _skel.Skeleton.with_slow_start_loss
    try:
        _skel.Skeleton.with_slow_start_loss = lambda self, rates, p10=None: fail_last_round(base(self, rates, p10),
                                                                                             rates, q)
        return float(analyze(sc).prediction)
    finally:
        _skel.Skeleton.with_slow_start_loss = base


def overflow_causes(trace, bmax: int) -> dict:
    """Slow starts (timeout to cwnd >= ssthresh, plus 45 time units) whose queue reaches ``bmax``,
    by what the ``LOOKBACK`` time units before the first overflow hold (trace every time unit)."""
    cw = np.asarray(trace.cwnd, dtype=float)[:, 0]
    ss = np.asarray(trace.ssthresh, dtype=float)[:, 0]
    q = np.asarray(trace.queue, dtype=float)
    cap = np.asarray(trace.capacity)
    to = np.nonzero((cw[1:] <= 1.0) & (cw[:-1] > 1.0))[0] + 1
    out = dict(slow_starts=0, overflows=0, after_rate_change=0, after_burst=0, neither=0)
    for k, nxt in zip(to[:-1], to[1:]):
        seg = np.arange(k + 1, nxt)
        reach = np.nonzero(cw[seg] >= ss[k + 1] - 1e-9)[0]
        end = min(k + 1 + reach[0] + 45, nxt) if reach.size else nxt
        qs = q[k + 1:end]
        if qs.size < 2:
            continue
        out["slow_starts"] += 1
        hit = np.nonzero(qs >= bmax - 1e-9)[0]
        if not hit.size:
            continue
        out["overflows"] += 1
        t = k + 1 + int(hit[0])
        w0 = max(k + 1, t - LOOKBACK)
        changed = bool(np.any(cap[w0:t + 1] != cap[w0]))
        burst = t > w0 and float(np.max(np.diff(q[w0:t + 1]))) >= BURST_PACKETS
        out["after_rate_change"] += changed
        out["after_burst"] += burst
        out["neither"] += not (changed or burst)
    return out


def point(args) -> dict:
    psi, bmax, switch_time, reps, units, seed = args
    sc = Scenario(delta=DELTA, bmax=bmax, psi=psi, rate_ratio=RATE_RATIO, wmax=WMAX, feedback="none",
                  loss_cycle="timer", switch_time=switch_time)
    ssc = sim_scenario("embedded", delta=DELTA, bmax=bmax, psi=psi, wmax=WMAX, feedback="none",
                       rate_ratio=RATE_RATIO, duration_units=units, interval=500 / 100e3)
    r = simulate(ssc, replications=reps, seed=seed, trace=True)
    c = r.counters
    to = max(c["timeouts"], 1)
    share = c["timeouts_in_slow_start"] / to
    row = dict(psi=psi, bmax=bmax, switch_time=switch_time, sim=r.efficiency_wire.mean,
               sim_half_width=r.efficiency_wire.half_width, timeouts=c["timeouts"], sim_ss_share=share,
               drops_per_timeout=c["frames_dropped"] / to,
               duplicates_per_timeout=(c["cells_served"] - c["delivered_segments"]) / to,
               chain_ss_share=chain_failure_share(sc), prediction=float(analyze(sc).prediction))
    row["what_if"] = what_if(sc, share)
    row.update(overflow_causes(r.trace, bmax))
    for k in ("prediction", "what_if"):
        row[f"{k}_gap"] = row[k] / row["sim"] - 1.0
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--switch-time", choices=("epoch", "uniform"), default="epoch")
    p.add_argument("--quick", action="store_true", help="psi 20 and 1000 at B_max 10, 2 x 20,000 time units")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="CSV (default out/slow_start_losses[_quick].csv)")
    a = p.parse_args(argv)
    if a.workers < 1:
        print(f"error: --workers={a.workers} is invalid: must be >= 1", file=sys.stderr)
        return 2
    if a.quick:
        pts = [(psi, 10) for psi in (20.0, 1000.0)]
        reps, units = 2, 20_000.0
    else:
        pts = [(psi, b) for b in (10, 12) for psi in FIG89_GRID["psi"] if psi >= 5.0]
        reps, units = 6, 200_000.0
    t0 = time.perf_counter()
    jobs = [(psi, b, a.switch_time, reps, units, a.seed) for psi, b in pts]
    if a.workers > 1:
        with ProcessPoolExecutor(a.workers) as ex:
            rows = list(ex.map(point, jobs))
    else:
        rows = [point(j) for j in jobs]
    df = pd.DataFrame(rows)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = a.out or os.path.join(root, "out", f"slow_start_losses{'_quick' if a.quick else ''}.csv")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    df.to_csv(out, index=False)
    cols = ["psi", "bmax", "sim", "prediction_gap", "sim_ss_share", "chain_ss_share", "what_if_gap",
            "drops_per_timeout", "duplicates_per_timeout", "overflows", "after_rate_change", "after_burst", "neither"]
    with pd.option_context("display.width", 200):
        print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"{len(df)} points, switch_time={a.switch_time}, in {time.perf_counter() - t0:.0f} s; written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
