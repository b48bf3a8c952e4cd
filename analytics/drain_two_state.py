"""The timeout cycle on buffers of 0.5-2 bandwidth-delay products: III-B.4's against the
drained one (``docs/model.md`` sec. 14), both against the cell simulator (issue 23,
``docs/traces.md`` sec. 7.2g).

The paper's two-state link (Delta 40 time units: a pipe of 40 packets at the high rate, 20 at
the low; rate ratio 0.5), TCP alone and TCP over INSTCAP, buffers ``--bmax`` (default 20, 40,
80 packets), ``--psi`` (default 5, 20, 100), window 256.  Per point: the simulator's
``efficiency_wire`` (no cell tax, the validity map's quantity) with its 95 % CI, and the
analysis' prediction and band with ``loss_cycle='paper'`` and ``'drain'``; whether each band
holds (conservative <= simulation + CI and optimistic >= simulation - CI).

Usage::

    python analytics/drain_two_state.py [--quick] [--feedbacks none,instcap] [--out DIR]

About 20 s on 2 cores (``--quick``: TCP alone, Bmax 80, psi 20, 2 x 500 s).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from tcpabr_model import markov, sim  # noqa: E402
from tcpabr_model.markov.scenario import LOSS_CYCLES  # noqa: E402
from tcpabr_model.runtime.atomic import write_table  # noqa: E402

DELTA, RATE_RATIO, WMAX = 40.0, 0.5, 256


def point(feedback: str, bmax: int, psi: float, replications: int, duration_units: float, seed: int) -> dict:
    """One grid point: the simulation and both analyses (efficiencies over the mean capacity)."""
    sc = sim.Scenario.from_normalized(delta=DELTA, bmax=bmax, psi=psi, rate_ratio=RATE_RATIO, feedback=feedback,
                                      wmax=WMAX, duration_units=duration_units)
    e = sim.simulate(sc, replications=replications, seed=seed).efficiency_wire
    row = {"feedback": feedback, "bmax": bmax, "psi": psi, "sim": e.mean, "sim_half_width": e.half_width}
    for cycle in LOSS_CYCLES:
        a = markov.analyze(markov.Scenario(delta=DELTA, bmax=bmax, psi=psi, rate_ratio=RATE_RATIO, wmax=WMAX,
                                           feedback=feedback, loss_cycle=cycle))
        row.update({f"{cycle}_prediction": a.prediction, f"{cycle}_conservative": a.conservative,
                    f"{cycle}_optimistic": a.optimistic, f"{cycle}_band_holds":
                    bool(a.conservative <= e.mean + e.half_width and a.optimistic >= e.mean - e.half_width),
                    "n_states": a.n_states})
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="TCP alone, Bmax 80, psi 20, 2 x 500 s")
    ap.add_argument("--feedbacks", default="none,instcap")
    ap.add_argument("--bmax", default="20,40,80", help="buffers in packets, comma-separated")
    ap.add_argument("--psi", default="5,20,100", help="mean sojourn per state / Delta, comma-separated")
    ap.add_argument("--replications", type=int, default=6)
    ap.add_argument("--duration-units", type=float, default=4e5, help="time units per replication (2000 s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "out" / "drain_two_state"))
    a = ap.parse_args(argv)
    fbs, bmaxes, psis = a.feedbacks.split(","), [int(x) for x in a.bmax.split(",")], [float(x) for x in a.psi.split(",")]
    reps, dur = a.replications, a.duration_units
    if a.quick:
        fbs, bmaxes, psis, reps, dur = ["none"], [80], [20.0], 2, 1e5
    t0 = time.perf_counter()
    rows = []
    for fb in fbs:
        for b in bmaxes:
            for psi in psis:
                r = point(fb, b, psi, reps, dur, a.seed)
                rows.append(r)
                print(f"{fb:8s} Bmax {b:3d} psi {psi:5g}: simulation {r['sim']:.4f} +/- {r['sim_half_width']:.4f} | "
                      + " | ".join(f"{c} {r[c + '_prediction']:.4f} [{r[c + '_conservative']:.4f}, "
                                   f"{r[c + '_optimistic']:.4f}] {'holds' if r[c + '_band_holds'] else 'misses'}"
                                   for c in LOSS_CYCLES), flush=True)
    df = pd.DataFrame(rows)
    os.makedirs(a.out, exist_ok=True)
    write_table(df, os.path.join(a.out, "drain_two_state.csv"))
    for fb, g in df.groupby("feedback", sort=False):
        print(f"{fb}: band holds at " + ", ".join(f"{int(g[c + '_band_holds'].sum())} of {len(g)} ({c})"
                                                  for c in LOSS_CYCLES))
    print(f"{time.perf_counter() - t0:.0f} s; table in {a.out}/drain_two_state.csv")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
