"""Where the Markov renewal analysis holds: bounds vs the cell simulator over a grid.

Over (psi, B_max, Delta, W_max), TCP over INSTCAP ABR and TCP alone, the analysis'
[conservative, optimistic] efficiency band (``tcpabr_model.markov.analyze``) against the
cell-level simulation in the like-with-like *embedded* capacity mode and in the
*continuous* mode (the paper's testbed), with the signed relative gap (see
``tcpabr_model.validity`` and ``docs/validity.md``).

Usage::

    python analytics/validity_map.py [--quick] [--out DIR] [--workers N] [--cache DIR] [--seed S]
    python analytics/validity_map.py --tcp sack --grid fig89 [--quick]   # issue 25's target grid
    python analytics/validity_map.py --grid fig89 --loss-cycle timer --switch-time uniform   # docs/model.md sec. 17

Writes to DIR (default ``out/validity_map`` at the repository root, git-ignored):
``validity_map.csv`` (one row per point), ``summary.csv`` (per feedback and mode),
``gap_<feedback>_<mode>.png`` (one heat map each) and ``gap_all.png``, and prints the
summary.  The full grid is 576 points (6 replications of 1000 s each); ``--quick`` is
64 points of 4 x 500 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tcpabr_model.plot._validity import plot_gap_heatmap  # noqa: E402
from tcpabr_model.runtime.atomic import save_figure, write_table  # noqa: E402
from tcpabr_model.validity import (ACK_CLOCKS, CA_INCREMENTS, FIG89_GRID, LOSS_CYCLES, ROUND_TRIPS,  # noqa: E402
                                   SWITCH_TIMES, TCPS, validity_map)


def _delay_share(ok: pd.DataFrame) -> float:
    """Share of the points whose throughput prediction holds where the total delay does too."""
    if "delay_ok" not in ok or "prediction_ok" not in ok:
        return np.nan
    held = ok[ok["prediction_ok"].astype(bool) & ok["sim_total_delay"].notna()]
    return float(held["delay_ok"].astype(bool).mean()) if len(held) else np.nan


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Per (feedback, mode): points, fraction inside / below / above, median and extreme gaps."""
    rows = []
    for (fb, mode), g in df.groupby(["feedback", "mode"], sort=True):
        ok = g[g["verdict"] != "failed"]
        rows.append({
            "feedback": fb, "mode": mode, "points": len(g), "failed": int((g["verdict"] == "failed").sum()),
            "inside": float((ok["verdict"] == "inside").mean()) if len(ok) else np.nan,
            "below": float((ok["verdict"] == "below").mean()) if len(ok) else np.nan,
            "above": float((ok["verdict"] == "above").mean()) if len(ok) else np.nan,
            "median_gap": float(ok["gap"].median()) if len(ok) else np.nan,
            "min_gap": float(ok["gap"].min()) if len(ok) else np.nan,
            "max_gap": float(ok["gap"].max()) if len(ok) else np.nan,
            "median_half_width": float(ok["sim_half_width"].median()) if len(ok) else np.nan,
            "prediction_within_ci_5pct": float(ok["prediction_ok"].mean()) if len(ok) and "prediction_ok" in ok
            else np.nan,
            "median_prediction_gap": float(ok["prediction_gap"].median()) if len(ok) and "prediction_gap" in ok
            else np.nan,
            # issue 26: the total delay (source + bottleneck) where the throughput prediction holds
            "delay_within_ci_5pct_where_prediction_ok": _delay_share(ok),
        })
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="64-point grid, 4 x 500 s per point (CI size)")
    p.add_argument("--out", default=None, help="output folder (default out/validity_map)")
    p.add_argument("--workers", type=int, default=None, help="local worker processes (default: the sweep's)")
    p.add_argument("--cache", default=None, help="sweep cache folder (resume an interrupted map)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--tcp", choices=TCPS, default="timeout-only",
                   help="TCP of the analysis and the simulator (docs/model.md sec. 12; default timeout-only)")
    p.add_argument("--loss-cycle", choices=LOSS_CYCLES, default="paper",
                   help="the analysis' timeout cycle (docs/model.md secs. 14-15; default paper, III-B.4)")
    p.add_argument("--switch-time", choices=SWITCH_TIMES, default="epoch",
                   help="when the analysis' rate changes inside the round trip (docs/model.md sec. 17; default "
                        "epoch, III-B.1; uniform: at an instant uniform inside it)")
    p.add_argument("--ca-increment", choices=CA_INCREMENTS, default="binomial",
                   help="the analysis' congestion-avoidance growth (docs/model.md sec. 18; default binomial, eq. 1's "
                        "coin per ACK; counter: one packet per W ACKs, as the simulated TCP)")
    p.add_argument("--ack-clock", choices=ACK_CLOCKS, default="at-epoch",
                   help="TCP alone's returning ACKs in the analysis (docs/model.md sec. 3a; default at-epoch, at the "
                        "previous level's spacing; spread: over the round trip); INSTCAP points ignore it")
    p.add_argument("--round-trip", choices=ROUND_TRIPS, default="propagation",
                   help="the analysis' epoch (docs/model.md sec. 3b; default propagation, eq. 5's Delta; "
                        "transmission: Delta plus one transmission at the high rate)")
    p.add_argument("--grid", choices=("validity", "fig89"), default="validity",
                   help="validity: the map's grid (576 points, --quick 64); fig89: the paper's Fig. 8/9 grid "
                        "(44 points: psi 1.5-1000, Bmax 10/12, Delta 40, embedded)")
    p.add_argument("--feedback", default=None,
                   help="comma-separated feedbacks of the points (instcap, effcap, none; default the grid's: "
                        "instcap,none)")
    p.add_argument("--effcap-m", default=None,
                   help="comma-separated EFFCAP M (samples of one round trip per average; default 1; docs/model.md "
                        "sec. 20); only with --feedback effcap")
    p.add_argument("--effcap-n", default=None,
                   help="comma-separated EFFCAP N (averages whose minimum is fed back; default 8); only with "
                        "--feedback effcap")
    args = p.parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = args.out or os.path.join(root, "out", "validity_map")
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    try:
        spec = dict(FIG89_GRID) if args.grid == "fig89" else {}
        if args.tcp != "timeout-only":
            spec["tcp"] = [args.tcp]
        if args.loss_cycle != "paper":
            spec["loss_cycle"] = [args.loss_cycle]
        if args.switch_time != "epoch":
            spec["switch_time"] = [args.switch_time]
        if args.ca_increment != "binomial":
            spec["ca_increment"] = [args.ca_increment]
        if args.ack_clock != "at-epoch":
            spec["ack_clock"] = [args.ack_clock]
        if args.round_trip != "propagation":
            spec["round_trip"] = [args.round_trip]
        if args.feedback is not None:
            spec["feedback"] = [v.strip() for v in args.feedback.split(",") if v.strip()]
        for name in ("effcap_m", "effcap_n"):
            text = getattr(args, name)
            if text is None:
                continue
            if "effcap" not in spec.get("feedback", ()):
                raise ValueError(f"--{name.replace('_', '-')}={text!r} is invalid without --feedback effcap")
            try:
                spec[name] = [int(v) for v in text.split(",") if v.strip()]
            except ValueError:
                raise ValueError(f"--{name.replace('_', '-')}={text!r} is invalid: must be comma-separated "
                                 "integers >= 1") from None
        df = validity_map(spec or None, quick=args.quick, seed=args.seed, cache_dir=args.cache,
                          workers=args.workers, progress=True)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - t0
    write_table(df, os.path.join(out, "validity_map.csv"))
    summ = summarize(df)
    write_table(summ, os.path.join(out, "summary.csv"))
    for (fb, mode), g in df.groupby(["feedback", "mode"], sort=True):
        fig = plot_gap_heatmap(g)
        save_figure(fig, os.path.join(out, f"gap_{fb}_{mode}.png"), dpi=120)
        plt.close(fig)
    fig = plot_gap_heatmap(df)
    save_figure(fig, os.path.join(out, "gap_all.png"), dpi=110)
    plt.close(fig)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(summ.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    failed = df[df["verdict"] == "failed"]
    for _, r in failed.iterrows():
        print(f"failed point: {r.get('error')}", file=sys.stderr)
    print(f"{len(df)} points in {elapsed:.1f} s ({int(df['cached'].sum()) if 'cached' in df else 0} from the cache); "
          f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
