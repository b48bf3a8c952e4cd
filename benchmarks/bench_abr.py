"""Benchmark of TCP over ABR with RM cells and ERICA+ in the network kernel.

Measures, on one core, the slides' "no VBR" backbone (seed 003: 15 TCP sources over ABR
VCs, 155.52 Mbps links, 15 ms one-way delay, ERICA+ at the bottleneck, source buffer
100,000 cells, preset ``abr_backbone_novbr_buf100000``) for 10 s of simulated time
(issue 9 target: under 30 s of wall time), plus the same with VBR background (d = 0.8,
p = 1 ms) and with INSTCAP in place of ERICA+ for comparison.

The kernel is compiled (and cached) by a short warm-up run first; the timed runs exclude
compilation.  "Cells" = cells emitted by the sources (data + RM + VBR) + cells served or
dropped at the ports.  Scripts here measure; they never assert.

Usage::

    python benchmarks/bench_abr.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tcpabr_model.sim import simulate_network  # noqa: E402
from tcpabr_model.sim.presets.abr_backbone import get_abr_preset  # noqa: E402

CASES = ("abr_backbone_novbr_buf100000", "abr_vbr_d080_p1ms", "abr_backbone_compare_instcap")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 s of simulated time instead of 10 s")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    dur = 1.0 if args.quick else 10.0
    # warm-up: compile / load the cached kernel
    simulate_network(get_abr_preset(CASES[0]).to_network(duration_s=0.01), replications=1, seed=0)
    rows = []
    for name in CASES:
        net = get_abr_preset(name).to_network(duration_s=dur)
        w0, c0 = time.perf_counter(), time.process_time()
        r = simulate_network(net, replications=1, seed=1)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        a = r.abr[0] if r.abr else {}
        rows.append({"case": name, "simulated_s": dur, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                     "kernel_s": round(r.kernel_seconds, 2), "cells": r.cells_simulated,
                     "cells_per_s": round(r.cells_simulated / r.kernel_seconds),
                     "throughput_mbps": round(a["throughput_mbps"], 2) if a else
                     round(sum(e.mean for e in r.goodput_bps) / 1e6, 2)})
    meta = {"python": platform.python_version(), "machine": platform.machine(),
            "cpu_count": os.cpu_count(), "load_avg": os.getloadavg()}
    if args.json:
        print(json.dumps({"rows": rows, "meta": meta}, indent=2))
    else:
        print(f"{'case':34s} {'sim s':>6s} {'wall s':>7s} {'cpu s':>6s} {'kernel s':>8s} {'Mcells':>7s} "
              f"{'Mcells/s':>8s} {'Mbps':>7s}")
        for r in rows:
            print(f"{r['case']:34s} {r['simulated_s']:6.1f} {r['wall_s']:7.2f} {r['cpu_s']:6.2f} "
                  f"{r['kernel_s']:8.2f} {r['cells'] / 1e6:7.2f} {r['cells_per_s'] / 1e6:8.2f} "
                  f"{r['throughput_mbps']:7.2f}")
        print(f"load average {meta['load_avg']}, {meta['cpu_count']} CPUs, Python {meta['python']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
