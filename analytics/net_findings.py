"""The seeds' findings from the network simulator, with 95 % confidence intervals.

Runs (and prints as Markdown tables, optionally also JSON):

1. seed 000 Tables 1-2: SACK TCP, 5 sources, VBR on/off (300/100/50 ms) with strict
   priority (GR = 0), LAN and WAN, both buffers, tail drop / EPD / Selective Drop;
2. seed 000 Tables 3-4 (SACK rows): GR = 0, 0.1, 0.5 with VBR 300 ms, 5 and 15 sources;
3. seed 002 Table 3: 15 TCPs with per-VC drop thresholds (throughput proportional to
   thresholds), and Table 5: GFR with 5 VCs of 3 merged TCPs;
4. seed 001 Sec. 4.1: the zero-loss buffer (two connections; no loss once the buffer
   holds both receiver windows), CLR and FLR against the buffer.

Usage::

    python analytics/net_findings.py [--quick] [--replications R] [--json PATH] [--only 1,2,3,4]
        [--sources 5,15]

``--quick`` shortens every run (2 replications, a quarter of the stated durations, fewer
rows) for a smoke test; the numbers in docs/network.md come from the full run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcpabr_model.sim import simulate_network  # noqa: E402
from tcpabr_model.stats import Estimate  # noqa: E402
from tcpabr_model.sim import preset  # noqa: E402
from tcpabr_model.runtime.atomic import atomic_open  # noqa: E402
from tcpabr_model.sim.presets.ubr_gfr import (  # noqa: E402
    TABLE1, TABLE2, TABLE3_002, TABLE5_002, TABLE34_SACK, seed000_network, seed001_network,
)


def ci(e, nd=2):
    return f"{e.mean:.{nd}f} ± {e.half_width:.{nd}f}"


def run(net, reps, seed, workers):
    return simulate_network(net, replications=reps, seed=seed, workers=workers)


def part1(a, rows_out):
    print("\n## Seed 000 Tables 1-2: SACK, 5 sources, VBR on/off, GR = 0 (efficiency / fairness)\n")
    print("| config | buffer | VBR ms | policy | efficiency (sim) | paper | fairness (sim) | paper | timeouts/run |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = list(TABLE1)
    if a.quick:
        keys = [("lan", 1000, 300), ("wan", 12000, 300), ("wan", 12000, 50)]
    for (cfg, buf, per) in keys:
        for j, pol in enumerate(("ubr", "epd", "sd")):
            net = seed000_network(cfg, 5, buf, per / 1000, 0.0, pol, "sack")
            if a.quick:
                net = net.with_(duration=net.duration / 4)
            r = run(net, a.reps, a.seed, a.workers)
            row = dict(table="000-1", config=cfg, buffer=buf, vbr_ms=per, policy=pol,
                       efficiency=r.efficiency.to_dict(), fairness=r.fairness.to_dict(),
                       paper_eff=TABLE1[(cfg, buf, per)][j], paper_fair=TABLE2[(cfg, buf, per)][j],
                       timeouts=r.counters["timeouts"] / r.replications, clr=r.cell_loss_ratio.mean)
            rows_out.append(row)
            print(f"| {cfg} | {buf} | {per} | {pol} | {ci(r.efficiency)} | {row['paper_eff']:.2f} | "
                  f"{ci(r.fairness)} | {row['paper_fair']:.2f} | {row['timeouts']:.0f} |", flush=True)


def part2(a, rows_out):
    print("\n## Seed 000 Tables 3-4 (SACK): guaranteed rate, VBR 300 ms (efficiency)\n")
    print("| config | sources | buffer | GR | policy | efficiency (sim) | paper | fairness (sim) | timeouts/run |")
    print("|---|---|---|---|---|---|---|---|---|")
    cfgs = [("wan", 12000), ("lan", 1000)] if not a.quick else [("wan", 12000)]
    if not a.quick:
        cfgs += [("wan", 36000), ("lan", 3000)]
    srcs = [int(x) for x in a.sources.split(",")] if not a.quick else [5]
    for n, (cfg, buf) in ((n, cb) for n in srcs for cb in cfgs):
        for gr in (0.0, 0.1, 0.5):
            for j, pol in enumerate(("ubr", "epd", "sd")):
                if gr == 0.0 and n == 5 and not a.quick:
                    # identical configuration to Table 1's 300 ms row: reuse it
                    prev = [x for x in rows_out if x.get("table") == "000-1" and x["config"] == cfg
                            and x["buffer"] == buf and x["vbr_ms"] == 300 and x["policy"] == pol]
                    if prev:
                        e = prev[0]["efficiency"]
                        print(f"| {cfg} | 5 | {buf} | {gr} | {pol} | {e['mean']:.2f} ± {e['half_width']:.2f} | "
                              f"{TABLE34_SACK[(cfg, 5, buf, gr)][j]:.2f} | (Table 1 run) | |", flush=True)
                        continue
                net = seed000_network(cfg, n, buf, 0.3, gr, pol, "sack")
                if a.quick:
                    net = net.with_(duration=net.duration / 4)
                r = run(net, a.reps, a.seed, a.workers)
                row = dict(table="000-34", config=cfg, sources=n, buffer=buf, gr=gr, policy=pol,
                           efficiency=r.efficiency.to_dict(), fairness=r.fairness.to_dict(),
                           paper_eff=TABLE34_SACK[(cfg, n, buf, gr)][j],
                           timeouts=r.counters["timeouts"] / r.replications)
                rows_out.append(row)
                print(f"| {cfg} | {n} | {buf} | {gr} | {pol} | {ci(r.efficiency)} | {row['paper_eff']:.2f} | "
                      f"{ci(r.fairness)} | {row['timeouts']:.0f} |", flush=True)


def part3(a, rows_out):
    print("\n## Seed 002 Table 3: 15 TCPs, one frame dropped per threshold crossing; ratio mu_i / mu_i^e "
          "by group of 3 TCPs\n")
    print("| experiment | group 1 | group 2 | group 3 | group 4 | group 5 | paper (groups 1-5) | total Mbit/s |")
    print("|---|---|---|---|---|---|---|---|")
    exps = (1, 2, 3, 4) if not a.quick else (1,)
    for e in exps:
        net = preset(f"seed002_threshold_15tcp_exp{e}").network
        if a.quick:
            net = net.with_(duration=net.duration / 4)
        r = run(net, a.reps, a.seed, a.workers)
        groups = []
        rat = r.samples["ratio"]            # replications x 15
        for g in range(5):
            # the paper averages the throughputs of each group of 3 TCPs (same threshold)
            est = Estimate.from_samples(rat[:, 3 * g:3 * g + 3].mean(axis=1))
            groups.append((est.mean, est.half_width))
        tot = sum(x.mean for x in r.vc_goodput_bps) / 1e6
        rows_out.append(dict(table="002-3", experiment=e, groups=groups, paper=TABLE3_002[e], total_mbps=tot,
                             efficiency=r.efficiency.to_dict()))
        print(f"| {e} | " + " | ".join(f"{m:.2f} ± {hw:.2f}" for m, hw in groups)
              + f" | {', '.join(f'{x:.2f}' for x in TABLE3_002[e])} | {tot:.1f} |", flush=True)
    print("\n## Seed 002 Table 5: GFR buffer management, 5 VCs x 3 merged SACK TCPs; (mu_i/mu)/(r_i/r)\n")
    print("| column | VC 1 | VC 2 | VC 3 | VC 4 | VC 5 | paper | utilisation | max queue |")
    print("|---|---|---|---|---|---|---|---|---|")
    for e in ((1, 2, 3) if not a.quick else (1,)):
        net = preset(f"seed002_gfr_15tcp_{e}").network
        if a.quick:
            net = net.with_(duration=net.duration / 4)
        r = run(net, a.reps, a.seed, a.workers)
        rows_out.append(dict(table="002-5", column=e, ratio=[x.to_dict() for x in r.share_ratio],
                             paper=TABLE5_002[e], efficiency=r.efficiency.to_dict(), qmax=r.queue_max[0]))
        print(f"| {e} | " + " | ".join(ci(x) for x in r.share_ratio)
              + f" | {', '.join(f'{x:.2f}' for x in TABLE5_002[e])} | {ci(r.efficiency)} | {r.queue_max[0]} |",
              flush=True)


def part4(a, rows_out):
    print("\n## Seed 001 Sec. 4.1: two TCPs over plain UBR (PPD); loss against the buffer\n")
    print("| MTU | windows (cells) | buffer | CLR | FLR | goodput Mbit/s | zero loss in every run |")
    print("|---|---|---|---|---|---|---|")
    dur = 20.0 if not a.quick else 5.0
    for mtu in (1500, 4352, 9180):
        for buf in (1088, 1632, 2176, 2304):
            net = seed001_network(connections=2, buffer=buf, mtu=mtu, b=None, duration=dur)
            r = run(net, a.reps, a.seed, a.workers)
            win = 2 * net.tcp.wmax * net.cells_per_frame
            zero = r.counters["cells_dropped"] == 0
            gp = sum(x.mean for x in r.vc_goodput_bps) / 1e6
            rows_out.append(dict(table="001-4.1", mtu=mtu, buffer=buf, windows_cells=win,
                                 clr=r.cell_loss_ratio.to_dict(), flr=r.frame_loss_ratio.to_dict(),
                                 goodput_mbps=gp, zero_loss=zero))
            print(f"| {mtu} | {win} | {buf} | {r.cell_loss_ratio.mean:.2e} | {r.frame_loss_ratio.mean:.2e} | "
                  f"{gp:.2f} | {'yes' if zero else 'no'} |", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--replications", dest="reps", type=int, default=None, help="default 5 (quick: 2)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--only", default="1,2,3,4", help="comma-separated parts to run")
    ap.add_argument("--sources", default="5,15", help="part 2: numbers of TCP sources (seed 000: 5, 15)")
    ap.add_argument("--json", default=None, help="also write the rows as JSON to this path")
    a = ap.parse_args(argv)
    if a.reps is None:
        a.reps = 2 if a.quick else 5
    parts = {int(x) for x in a.only.split(",")}
    rows = []
    t0 = time.time()
    print(f"# Network simulator findings (replications={a.reps}, seed={a.seed}, quick={a.quick})")
    for k, f in ((1, part1), (2, part2), (3, part3), (4, part4)):
        if k in parts:
            f(a, rows)
    print(f"\nwall time {time.time() - t0:.0f} s")
    if a.json:
        with atomic_open(a.json) as fh:
            json.dump(rows, fh, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
