"""The slides' ABR findings (seed 003) from the network simulator (public API only).

Runs every preset of :mod:`tcpabr_model.sim.presets.abr_backbone` (TCP over ABR on the ATM
backbone without VBR for source buffers 100 .. 100000 cells, the nine VBR on/off cases,
the three feedback delays, the two ERICA+ averaging settings, and the backbone with
INSTCAP / EFFCAP in place of ERICA+), prints the simulated numbers next to the slides'
tables, and writes ``abr_findings.csv``, ``abr_findings.md`` and ``abr_queues.png`` to DIR
(default ``out/abr_findings`` at the repository root, git-ignored).

Usage::

    python analytics/abr_findings.py [--quick] [--duration S] [--out DIR] [--only SUBSTRING]
    python analytics/abr_findings.py --mechanism

``--quick`` simulates 2 s per case (default: each case's 10 s).  The slides' numbers are
printed for comparison only; nothing is tuned toward them (``docs/abr_erica.md``).

``--mechanism`` runs only the measurement behind ``docs/abr_erica.md`` ("Findings"): the
feedback-delay row 1 (d = 0.8, p = 10 ms, 1 ms feedback delay, 3 ms RTT) with 15 greedy
ABR sources (no TCP) through the single-port loop of ``_abr_loop``, with ERICA's "avoid
sudden increase" step on and off, and prints per-interval and per-BRM statistics (a few
seconds).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tcpabr_model.runtime.atomic import atomic_open, save_figure, write_table  # noqa: E402
from tcpabr_model.sim import simulate_network  # noqa: E402
from tcpabr_model.sim.presets.abr_backbone import abr_presets  # noqa: E402


def run_case(case, duration, seed):
    net = case.to_network(duration_s=duration)
    t0 = time.perf_counter()
    r = simulate_network(net, replications=1, seed=seed)
    wall = time.perf_counter() - t0
    row = {"preset": case.name, "table": case.table, "rate_allocation": case.rate_allocation,
           "duration_s": duration, "wall_s": round(wall, 2)}
    if r.abr:
        a = r.abr[0]
        row.update({
            "max_switch_q_cells": a["max_switch_queue_cells"],
            "max_switch_q_rtt": round(a["max_switch_queue_rtt"], 3),
            "diverges": a["diverges"],
            "queue_slope_cells_per_s": round(a["queue_slope_cells_per_s"], 1),
            "max_source_q_cells": float(a["max_source_queue_cells"].max()),
            "mean_source_q_cells": round(float(a["mean_source_queue_cells"].mean()), 1),
            "source_drop_cells": float(a["source_drops_cells"].sum()),
            "throughput_mbps": round(a["throughput_mbps"], 2),
        })
        series = (a["queue_t"], a["queue_cells"])
    else:
        secs = net.duration
        row.update({
            "max_switch_q_cells": float(r.queue_max[0]),
            "max_switch_q_rtt": round(r.queue_max[0] / case.rtt_cells, 3),
            "diverges": None, "queue_slope_cells_per_s": None,
            "max_source_q_cells": None, "mean_source_q_cells": None, "source_drop_cells": None,
            "throughput_mbps": round(sum(e.mean for e in r.goodput_bps) / 1e6, 2),
        })
        series = None
        del secs
    row["fairness"] = round(r.fairness.mean, 4)
    row["switch_cells_dropped"] = r.counters["cells_dropped"]
    for k, v in case.slides.items():
        row[f"slides_{k}"] = v
    return row, series


def mechanism(secs: float = 2.0) -> list[dict]:
    """Greedy-source loop of the 1 ms feedback-delay case, traced; one dict per variant."""
    from tcpabr_model.sim.abr import greedy_loop as L
    from tcpabr_model.sim.abr.divergence import queue_divergence
    from tcpabr_model.sim.presets.abr_backbone import slides_source_params
    from tcpabr_model.sim.switch.erica import EricaParams

    link = 155.52e6 / 424.0
    slot = 1.0 / link
    n, d1, period, duty, vbr = 15, 0.5e-3, 10e-3, 0.8, 0.8
    ns = int(secs / slot)
    on = int(round(duty * period / slot))
    per = int(round(period / slot))
    rows = []
    for limit in (True, False):
        er = EricaParams(average_sources=False, average_overload=False, limit_low_ccr=limit)
        every = 100
        q = np.zeros(ns // every + 1)
        acr = np.zeros(ns // every + 1)
        out = np.zeros(L.LO_NOUT, dtype=np.int64)
        ilog = np.zeros((ns // 50, L.IL_N))
        blog = np.zeros((ns // 50, L.BL_N))
        nlog = np.zeros(2, dtype=np.int64)
        d = int(round(d1 / slot))
        L.abr_loop(ns, ns, d, 2 * d, vbr, on, per - on, slides_source_params().to_array(slot),
                   er.to_array(slot, 1.0), n, every, 1 << 20, q, acr, out, ilog, blog, nlog)
        il, bl = ilog[:nlog[0]], blog[:nlog[1]]
        t = np.arange(q.size) * every * slot
        h_il = il[:, L.IL_T] * slot >= secs / 2
        h_bl = bl[:, L.BL_T] * slot >= secs / 2
        on_il = (il[:, L.IL_T] % per) < on
        # fair share in force when each BRM was stamped (the last interval end before it)
        k = np.searchsorted(il[:, L.IL_T], bl[:, L.BL_T], side="right") - 1
        fair = np.where(k >= 0, il[np.maximum(k, 0), L.IL_FAIR], np.inf)
        low = bl[:, L.BL_CCRTAB] < fair
        raised = low & (bl[:, L.BL_ER] > fair * (1 + 1e-9))
        v = queue_divergence(t, q, link)
        rows.append({
            "limit_low_ccr": limit,
            "brm_per_vc_per_s": round(len(bl) / secs / n, 1),
            "brm_spacing_per_vc_ms": round(1e3 * secs * n / len(bl), 2),
            "intervals_mean_ms": round(float(il[h_il, L.IL_DT].mean()) * slot * 1e3, 3),
            "intervals_ended_by_cells": round(float(np.mean(il[h_il, L.IL_BYTIME] == 0)), 2),
            "cabr_on_median": round(float(np.median(il[h_il & on_il, L.IL_CABR])), 3),
            "cabr_off_median": round(float(np.median(il[h_il & ~on_il, L.IL_CABR])), 3),
            "z_on_median": round(float(np.median(il[h_il & on_il, L.IL_Z])), 2),
            "z_off_median": round(float(np.median(il[h_il & ~on_il, L.IL_Z])), 2),
            "brm_low_ccr_raised_above_fair_share": round(float(raised[h_bl].mean()), 3),
            "mean_sum_acr_2nd_half": round(float(acr[acr.size // 2:].mean()), 3),
            "mean_abr_capacity": round(1 - duty * vbr, 3),
            "queue_mean_2nd_half_cells": round(float(q[q.size // 2:].mean())),
            "queue_max_cells": float(q.max()),
            "queue_slope_cells_per_s": round(v.slope),
            "diverges": v.diverges,
        })
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 s of simulated time per case")
    ap.add_argument("--duration", type=float, default=None, help="seconds per case (overrides --quick)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="run only presets whose name contains this")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                   "out", "abr_findings"))
    ap.add_argument("--mechanism", action="store_true",
                    help="only the traced greedy-source loop of the 1 ms feedback-delay case")
    args = ap.parse_args(argv)
    if args.mechanism:
        for row in mechanism():
            print(row, flush=True)
        return 0
    os.makedirs(args.out, exist_ok=True)
    rows, traces = [], {}
    for name, case in abr_presets().items():
        if args.only and args.only not in name:
            continue
        dur = args.duration if args.duration is not None else (2.0 if args.quick else case.duration_s)
        row, series = run_case(case, dur, args.seed)
        rows.append(row)
        if series is not None:
            traces[name] = series
        print(f"{name:34s} maxQ={row['max_switch_q_cells']:>9.0f} ({row['max_switch_q_rtt']:.2f} RTT) "
              f"div={row['diverges']!s:5s} thr={row['throughput_mbps']:7.2f} Mbps "
              f"srcQmax={row['max_source_q_cells']} drops={row['source_drop_cells']} "
              f"slides={ {k[7:]: v for k, v in row.items() if k.startswith('slides_')} } [{row['wall_s']} s]",
              flush=True)
    df = pd.DataFrame(rows)
    write_table(df, os.path.join(args.out, "abr_findings.csv"))
    with atomic_open(os.path.join(args.out, "abr_findings.md")) as fh:
        cols = list(df.columns)
        fh.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
        for _, rr in df.iterrows():
            fh.write("| " + " | ".join("" if (isinstance(x, float) and np.isnan(x)) else str(x)
                                      for x in rr.tolist()) + " |\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = [n for n in traces if n.startswith(("abr_vbr_", "abr_fbdelay_", "abr_erica_avg_", "abr_backbone_novbr"))]
        if names:
            ncol = 4
            nrow = int(np.ceil(len(names) / ncol))
            fig, axes = plt.subplots(nrow, ncol, figsize=(4 * ncol, 2.6 * nrow), squeeze=False)
            for ax, n in zip(axes.flat, names):
                t, q = traces[n]
                ax.plot(t, q, lw=0.7)
                ax.set_title(n, fontsize=8)
                ax.set_xlabel("s", fontsize=7)
                ax.set_ylabel("switch queue, cells", fontsize=7)
                ax.tick_params(labelsize=7)
            for ax in list(axes.flat)[len(names):]:
                ax.axis("off")
            fig.tight_layout()
            save_figure(fig, os.path.join(args.out, "abr_queues.png"), dpi=110)
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        pass
    print(f"wrote {args.out}/abr_findings.csv, abr_findings.md, abr_queues.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
