"""Regenerate the analytical curves of Figs. 8 and 9 of seed 004.

TCP over INSTCAP ABR (Fig. 8) and TCP alone (Fig. 9): round-trip delay 40 time units,
bottleneck buffers 10 and 12 packets, low rate half the high rate, psi from 1 to 200,
optimistic and conservative Markov renewal bounds.  Prints the efficiency table
(throughput / mean capacity, packets incl. TCP/IP headers, no ATM cell tax), writes it
as CSV and the plot as PNG.

    python analytics/fig8_fig9.py [--out out/fig8_fig9] [--points 30]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", default="out/fig8_fig9", help="output folder (CSV + PNG)")
    ap.add_argument("--points", type=int, default=30, help="number of psi values in [1, 200]")
    ap.add_argument("--wmax", type=int, default=128, help="maximum TCP window (packets)")
    args = ap.parse_args(argv)
    if args.points < 2:
        print("fig8_fig9: error: --points must be >= 2", file=sys.stderr)
        return 2

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from tcpabr_model.markov import Scenario, analyze, sweep_psi

    psis = np.unique(np.round(np.geomspace(1.0, 200.0, args.points), 3))
    # compile the numba kernels once before timing
    analyze(Scenario(delta=4, bmax=2, psi=2, wmax=8))
    analyze(Scenario(delta=4, bmax=2, psi=2, wmax=8, feedback="none"))
    t0 = time.perf_counter()
    frames = []
    for feedback in ("instcap", "none"):
        for bmax in (10, 12):
            sc = Scenario(delta=40, bmax=bmax, rate_ratio=0.5, wmax=args.wmax, feedback=feedback)
            frames.append(sweep_psi(sc, psis))
    elapsed = time.perf_counter() - t0
    df = pd.concat(frames, ignore_index=True)
    os.makedirs(args.out, exist_ok=True)
    df.to_csv(os.path.join(args.out, "fig8_fig9.csv"), index=False)

    table = df.pivot_table(index="psi", columns=["feedback", "bmax"],
                           values=["optimistic", "conservative"])
    table = table.reorder_levels([1, 2, 0], axis=1).sort_index(axis=1)
    pd.set_option("display.width", 200)
    print("Efficiency (throughput / mean capacity 0.75; packets incl. TCP/IP headers, no ATM cell tax)")
    print("delta = 40, rate ratio 0.5, wmax =", args.wmax)
    print(table.round(4).to_string())
    print(f"\n{len(df)} chains solved in {elapsed:.2f} s after compilation "
          f"(largest chain {df.n_states.max()} states, max residual {df.residual.max():.1e})")

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
    fig.savefig(png, dpi=120)
    print(f"wrote {png} and {os.path.join(args.out, 'fig8_fig9.csv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
