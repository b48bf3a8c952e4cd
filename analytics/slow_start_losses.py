"""Slow-start losses of the timeout-only TCP alone on the Fig. 8/9 grid (docs/model.md sec. 15b).

Sec. 15's timer cycle was 2-10 % above the simulator at psi 10-20 for TCP alone. This script
measures the reason apart and checks sec. 15b, the rule built from it (docs/validity.md,
"Slow-start losses at psi 10-20"):

* the simulator's counters per point: the share of timeouts whose segment was first sent in slow
  start (``timeouts_in_slow_start / timeouts``), frames dropped and duplicate segments served per
  timeout;
* from the first replication's trace (every time unit): each slow start whose bottleneck queue
  reaches ``B_max`` (in the slow start or the round after it), split by what preceded it in the
  90 time units before: a rate change, a burst (the queue rising by at least 3.5 packets in one
  time unit, which doubled ACKs alone cannot do), or neither;
* the chain's share of failing slow starts with sec. 15's rule alone and with sec. 15b's go-back-N
  burst, the two predictions, and a **what-if**: sec. 15's prediction when its slow starts fail in
  their last round at the simulator's share (``what_if``; a diagnostic, not a model: it takes the
  share from the simulator).

    python analytics/slow_start_losses.py [--switch-time epoch|uniform] [--quick] [--workers 2]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.markov import analysis as _analysis
from tcpabr_model.markov import skeleton as _skel
from tcpabr_model.markov.slow_start import burst_failure, fail_last_round, with_go_back_n_burst
from tcpabr_model.markov.solvers import stationary_distribution
from tcpabr_model.sim import simulate
from tcpabr_model.validity import FIG89_GRID, sim_scenario

DELTA, WMAX, RATE_RATIO = 40.0, 128, 0.5
#: a one-time-unit rise of the queue that doubled ACKs cannot make (they add one packet per unit)
BURST_PACKETS = 3.5
#: time units before an overflow searched for a rate change or a burst
LOOKBACK = 90


def _chains(sc: Scenario):
    """``(sk0, sk15, sk15b, Q)``: the skeleton, with sec. 15's rule, and with sec. 15b's burst too."""
    sk0 = _skel.skeleton_for(sc)
    Q = sc.rate_matrix
    sk15 = sk0.with_slow_start_loss(Q)
    return sk0, sk15, with_go_back_n_burst(sk0, sk15, Q), Q


def _entry_shares(sc: Scenario):
    """Per loss entry of the skeleton: whether sec. 15's rule fails it, the probability that sec. 15b's
    burst fails it (``burst_failure``), and the stationary loss mass of the entry under the full timer
    chain."""
    sk0, sk15, sk15b, Q = _chains(sc)
    pi = stationary_distribution(sk15b, Q).pi
    rows = np.repeat(np.arange(sk0.n_states), np.diff(sk0.ls_ptr))
    return sk15.ls_m != sk0.ls_m, burst_failure(sk0, sk15), pi[rows] * sk0.p_loss[rows] * sk0.ls_prob


def chain_failure_share(sc: Scenario, burst: bool = True) -> float:
    """The share of the chain's loss events (stationary loss mass) whose slow start fails: by sec.
    15's rule, and with ``burst`` by sec. 15b's go-back-N burst too (docs/model.md)."""
    f15, qb, mass = _entry_shares(sc)
    fail = f15 + (qb if burst else 0.0)
    return float((mass * fail).sum() / mass.sum()) if mass.sum() > 0 else 0.0


@contextlib.contextmanager
def _without_burst():
    """A context in which :func:`~tcpabr_model.markov.analyze` leaves sec. 15b out (sec. 15 alone)."""
    saved = _analysis.with_go_back_n_burst
    _analysis.with_go_back_n_burst = lambda before, after, P: after
    try:
        yield
    finally:
        _analysis.with_go_back_n_burst = saved


def what_if(sc: Scenario, share: float) -> float:
    """Sec. 15's prediction (without sec. 15b) when the chain's slow starts fail at the simulator's
    ``share``: every slow start sec. 15's rule passes (``m >= 4``) fails in its last round with
    ``q = (share - f) / (1 - f)``, ``f`` sec. 15's own share (0 where it fails at least as often)."""
    f = chain_failure_share(sc, burst=False)
    q = max(0.0, (share - f) / (1.0 - f)) if f < 1.0 else 0.0
    base = _skel.Skeleton.with_slow_start_loss

    def patched(self, rates, p10=None):
        after = base(self, rates, p10)
        return fail_last_round(after, rates, np.where((after.ls_m == self.ls_m) & (self.ls_m >= 4), q, 0.0))
    with _without_burst():
        try:
            _skel.Skeleton.with_slow_start_loss = patched
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
               chain_ss_share=chain_failure_share(sc), chain_ss_share_sec15=chain_failure_share(sc, burst=False),
               prediction=float(analyze(sc).prediction))
    with _without_burst():
        row["prediction_sec15"] = float(analyze(sc).prediction)
    row["what_if"] = what_if(sc, share)
    row.update(overflow_causes(r.trace, bmax))
    for k in ("prediction", "prediction_sec15", "what_if"):
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
    cols = ["psi", "bmax", "sim", "prediction_sec15_gap", "prediction_gap", "what_if_gap", "sim_ss_share",
            "chain_ss_share_sec15", "chain_ss_share",
            "drops_per_timeout", "duplicates_per_timeout", "overflows", "after_rate_change", "after_burst", "neither"]
    with pd.option_context("display.width", 200):
        print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"{len(df)} points, switch_time={a.switch_time}, in {time.perf_counter() - t0:.0f} s; written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
