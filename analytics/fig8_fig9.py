"""Regenerate the analytical curves of Figs. 8 and 9 of seed 004.

TCP over INSTCAP ABR (Fig. 8) and TCP alone (Fig. 9): round-trip delay 40 time units,
bottleneck buffers 10 and 12 packets, low rate half the high rate, psi from 1 to 200,
optimistic and conservative Markov renewal bounds.  Prints the efficiency table
(throughput / mean capacity, packets incl. TCP/IP headers, no ATM cell tax), writes it
as CSV and the plot as PNG.  The 4 x ``--points`` chains are one
``run_sweep("analysis", ...)`` (:mod:`tcpabr_model.sweep`; ``--cache DIR`` keeps the
solved points, ``--workers N`` sets the worker processes, default all cores).

    python analytics/fig8_fig9.py [--out out/fig8_fig9] [--points 30] [--workers N] [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from tcpabr_model.runtime.atomic import save_figure, write_table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", default="out/fig8_fig9", help="output folder (CSV + PNG)")
    ap.add_argument("--points", type=int, default=30, help="number of psi values in [1, 200]")
    ap.add_argument("--wmax", type=int, default=128, help="maximum TCP window (packets)")
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    ap.add_argument("--cache", default=None, help="disk cache folder of the sweep (default: none)")
    args = ap.parse_args(argv)
    if args.points < 2:
        print("fig8_fig9: error: --points must be >= 2", file=sys.stderr)
        return 2
    if args.workers is not None and args.workers < 1:
        print("fig8_fig9: error: --workers must be >= 1", file=sys.stderr)
        return 2

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from tcpabr_model.markov import Scenario, analyze
    from tcpabr_model.sweep import Grid, SweepError, run_sweep

    psis = np.unique(np.round(np.geomspace(1.0, 200.0, args.points), 3))
    # compile the numba kernels once before timing (forked workers inherit them)
    analyze(Scenario(delta=4, bmax=2, psi=2, wmax=8))
    analyze(Scenario(delta=4, bmax=2, psi=2, wmax=8, feedback="none"))
    grid = Grid({"feedback": ["instcap", "none"], "bmax": [10, 12], "psi": [float(p) for p in psis]},
                fixed={"delta": 40, "rate_ratio": 0.5, "wmax": args.wmax})
    t0 = time.perf_counter()
    try:
        df = run_sweep("analysis", grid, workers=args.workers, cache_dir=args.cache, on_error="raise")
    except (ValueError, SweepError) as exc:
        print(f"fig8_fig9: error: {exc}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - t0
    os.makedirs(args.out, exist_ok=True)
    write_table(df, os.path.join(args.out, "fig8_fig9.csv"))

    table = df.pivot_table(index="psi", columns=["feedback", "bmax"],
                           values=["optimistic", "conservative"])
    table = table.reorder_levels([1, 2, 0], axis=1).sort_index(axis=1)
    pd.set_option("display.width", 200)
    print("Efficiency (throughput / mean capacity 0.75; packets incl. TCP/IP headers, no ATM cell tax)")
    print("delta = 40, rate ratio 0.5, wmax =", args.wmax)
    print(table.round(4).to_string())
    cached = int(df.cached.sum())
    print(f"\n{len(df)} chains solved in {elapsed:.2f} s after compilation "
          f"(largest chain {df.n_states.max()} states, max residual {df.residual.max():.1e}"
          + (f"; {cached} from the cache" if cached else "") + ")")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, feedback, title in ((axes[0], "instcap", "Fig. 8: TCP over ABR (INSTCAP)"),
                                (axes[1], "none", "Fig. 9: TCP alone")):
        for bmax, color in ((10, "C0"), (12, "C3")):
            sub = df[(df.feedback == feedback) & (df.bmax == bmax)]
            ax.plot(sub.psi, sub.optimistic, "-", color=color, label=f"optimistic, B={bmax}")
            ax.plot(sub.psi, sub.conservative, "--", color=color, label=f"conservative, B={bmax}")
        ax.set_xscale("log")
        ax.set_xlabel(r"$\psi = \tau/\Delta$")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("efficiency (throughput / mean capacity)")
    fig.suptitle(r"Markov renewal bounds, $\Delta$ = 40 packet times, low rate = high/2")
    fig.tight_layout()
    png = os.path.join(args.out, "fig8_fig9.png")
    save_figure(fig, png, dpi=120)
    print(f"wrote {png} and {os.path.join(args.out, 'fig8_fig9.csv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
