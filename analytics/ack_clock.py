"""TCP alone's ACK clock: the simulator's window and queue at rate drops against the chain's,
with section 3's clustered clock and the spread one (docs/model.md sec. 3a, issue 25).

    python analytics/ack_clock.py [--psi 1.5] [--bmax 10] [--tcp sack] [--units 400000] [--seed 0]

Simulates TCP alone on the paper's two-state link in the embedded mode (the Fig. 8/9 settings,
Delta 40, W_max 128), sampling the window, ``ssthresh`` and the bottleneck queue every time unit,
and solves the chain with ``ack_clock='at-epoch'`` (``switch_time`` 'epoch' and 'uniform') and
``'spread'``.  Prints a markdown table and
writes it to ``out/ack_clock/ack_clock.csv``:

* loss events per 1000 time units (the simulator's fast retransmits and timeouts; the chain's
  ``pi @ p_loss`` over its mean interval);
* the window at a loss (the simulator's twice ``ssthresh`` after each loss that changes it; the
  chain's ``A + B + D`` at the state whose interval loses, weighted by ``pi p_loss``);
* the mean window (time average of the simulator's ``cwnd``; the chain's stationary ``A + B + D``);
* after each high-to-low change met with a window of 20-25 packets, the largest queue in the next
  two round trips (the simulator's; the chain's clustered burst of that window overflows).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analytics"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tcpabr_model.markov import Scenario, skeleton_for  # noqa: E402
from tcpabr_model.markov.solvers import stationary_distribution  # noqa: E402
from tcpabr_model.runtime.atomic import write_table  # noqa: E402
from tcpabr_model.sim import TcpConfig, simulate  # noqa: E402
from tcpabr_model.validity import sim_scenario  # noqa: E402
from traces_fit import md_table  # noqa: E402

DELTA, WMAX = 40.0, 128


def simulated(psi: float, bmax: int, tcp: str, units: float, seed: int) -> dict:
    """The simulator's loss rate, window at the loss and after rate drops (one replication)."""
    unit = 500 / 100e3          # one time unit: a 500-byte packet at 100 kB/s (validity.embedded_sim_scenario)
    kw = {"duration_units": units, "interval": unit}
    if tcp != "timeout-only":
        kw["tcp"] = TcpConfig(variant=tcp, wmax=WMAX)
    sc = sim_scenario("embedded", delta=DELTA, bmax=bmax, psi=psi, wmax=WMAX, feedback="none", **kw)
    r = simulate(sc, replications=1, seed=seed, trace=True)
    tr = r.trace
    cw, ss, cap, q = tr.cwnd[:, 0], tr.ssthresh[:, 0], tr.capacity, tr.queue
    events = r.counters["fast_retransmits"] + r.counters["timeouts"]
    changed = np.flatnonzero(np.diff(ss) != 0) + 1
    drops = np.flatnonzero((cap[1:] == 1) & (cap[:-1] == 0)) + 1
    mid = drops[(cw[drops] >= 20) & (cw[drops] < 25)]
    peak = np.array([q[i:i + int(2 * DELTA)].max() for i in mid]) if mid.size else np.array([np.nan])
    return {"loss_events_per_kunit": events / units * 1000.0,
            "window_at_loss": float(np.median(2 * ss[changed])) if changed.size else np.nan,
            "mean_window": float(cw.mean()),
            "drops_at_window_20_25": int(mid.size),
            "queue_after_drop_mean_peak": float(np.mean(peak)),
            "queue_after_drop_full_share": float(np.mean(peak >= bmax))}


def chain(psi: float, bmax: int, tcp: str, clock: str, switch_time: str = "epoch") -> dict:
    """The chain's loss rate, window at the loss state and mean window."""
    sc = Scenario(delta=DELTA, bmax=bmax, psi=psi, wmax=WMAX, feedback="none", tcp=tcp, ack_clock=clock,
                  switch_time=switch_time)
    sk = skeleton_for(sc)
    pi = stationary_distribution(sk, sc.rate_matrix).pi
    w = sk.states[:, :3].sum(axis=1)
    pl = pi * sk.p_loss
    return {"loss_events_per_kunit": float(pl.sum() / (pi @ sk.u * DELTA) * 1000.0),
            "window_at_loss": float((pl * w).sum() / pl.sum()),
            "mean_window": float(pi @ w)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--psi", type=float, default=1.5)
    p.add_argument("--bmax", type=int, default=10)
    p.add_argument("--tcp", choices=("timeout-only", "sack"), default="sack")
    p.add_argument("--units", type=float, default=400_000.0, help="simulated time units (default 4e5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="output folder (default out/ack_clock)")
    args = p.parse_args(argv)
    try:
        rows = {"simulator": simulated(args.psi, args.bmax, args.tcp, args.units, args.seed)}
        for clock, switch in (("at-epoch", "epoch"), ("at-epoch", "uniform"), ("spread", "epoch")):
            rows[f"chain, {clock}, switch_time {switch}"] = chain(args.psi, args.bmax, args.tcp, clock, switch)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    df = pd.DataFrame(rows).T
    out = args.out or os.path.join(ROOT, "out", "ack_clock")
    os.makedirs(out, exist_ok=True)
    write_table(df.reset_index(names="source"), os.path.join(out, "ack_clock.csv"))
    print(f"TCP alone ({args.tcp}), psi {args.psi}, B_max {args.bmax}, Delta {DELTA:g}, W_max {WMAX}")
    print(md_table(["", *df.columns], [[k, *(f"{v:.3g}" for v in r)] for k, r in zip(df.index, df.to_numpy())]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
