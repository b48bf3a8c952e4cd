"""Benchmark of the cell-level simulator against a pure-Python event loop (same run).

Measures, on one core:

1. cells simulated per second by the numba kernel (compilation excluded, warm cache),
   for INSTCAP / EFFCAP / TCP alone at Fig. 8's point (Delta = 40, Bmax = 10, psi = 20)
   and at psi = 1;
2. the same scenarios run by ``_sim_baseline.run_baseline`` (a heapq event loop written
   in plain Python), with the efficiency of both as a sanity check;
3. the wall time ``simulate`` needs to reach a 95 % half-width below 1 % of the efficiency
   at Fig. 8's point (INSTCAP, replications of 2000 s of simulated time).

"Cells simulated" = cells sent by the sources + cells served or dropped at the bottleneck
(for TCP alone the units are IP packets).  Scripts here measure; they never assert.

Usage::

    python benchmarks/bench_sim.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _sim_baseline import run_baseline  # noqa: E402

import numpy as np  # noqa: E402

from tcpabr_model.sim import Scenario, simulate  # noqa: E402
from tcpabr_model.sim.kernels import fast_path as K  # noqa: E402
from tcpabr_model.sim.driver import fast_path_args  # noqa: E402


def time_kernel(sc: Scenario, seed: int, repeats: int):
    """Best-of-``repeats`` wall and CPU seconds of the kernel alone on one capacity path."""
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    args = fast_path_args(sc, rng, trace=True)
    g = args[0]
    wall = cpu = float("inf")
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        st = K.simulate_kernel(*args)[0]
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    cells = int(st[:, K.S_CSENT].sum() + st[:, K.S_CSERVED].sum() + st[:, K.S_CDROP].sum())
    return cells, int(g[K.G_NSLOTS]), wall, cpu


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeats", type=int, default=3, help="kernel timings: best of this many runs")
    args = ap.parse_args(argv)
    kdur = 4000.0 if args.quick else 20000.0      # simulated seconds for the kernel
    bdur = 100.0 if args.quick else 400.0         # simulated seconds for the baseline

    # compile (or load the cache) outside the timings
    simulate(Scenario.from_normalized(duration=5.0), 1, seed=0)
    rows = []
    for fb, psi in [("instcap", 20.0), ("effcap", 20.0), ("none", 20.0), ("instcap", 1.0), ("effcap", 1.0)]:
        sc = Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=fb, duration=kdur)
        cells, slots, wall, cpu = time_kernel(sc, 1, args.repeats)
        r = simulate(sc.with_(duration=bdur), 1, seed=1)
        c0 = time.process_time()
        b = run_baseline(sc.with_(duration=bdur), seed=1)
        bcpu = time.process_time() - c0
        rows.append({
            "feedback": fb, "psi": psi,
            "kernel_cells_per_s": cells / wall, "kernel_cells_per_cpu_s": cells / cpu,
            "kernel_slots_per_s": slots / wall, "kernel_cells": cells, "kernel_s": wall, "kernel_cpu_s": cpu,
            "kernel_efficiency_same_length_as_baseline": r.efficiency.mean,
            "baseline_cells_per_s": b["cells_per_second"], "baseline_cells_per_cpu_s": b["cells"] / bcpu,
            "baseline_cells": b["cells"], "baseline_s": b["seconds"], "baseline_efficiency": b["efficiency"],
            "speedup": (cells / wall) / b["cells_per_second"],
        })
    sc8 = Scenario.from_normalized(delta=40, bmax=10, psi=20, feedback="instcap", duration=2000.0)
    t0 = time.perf_counter()
    r8 = simulate(sc8, replications=5, seed=1, target_rel_halfwidth=0.01)
    t8 = time.perf_counter() - t0
    fig8 = {"seconds": t8, "replications": r8.replications, "efficiency": r8.efficiency.mean,
            "half_width": r8.efficiency.half_width, "rel_half_width": r8.efficiency.half_width / r8.efficiency.mean}
    out = {"machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine(),
                       "cpus": os.cpu_count()},
           "kernel_duration_s": kdur, "baseline_duration_s": bdur, "rows": rows, "fig8_point_to_1pct": fig8}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"kernel: {kdur:g} s simulated per scenario, best of {args.repeats}; baseline: {bdur:g} s simulated; "
          f"efficiencies both over {bdur:g} s on the same capacity path\n")
    print("| feedback | psi | kernel cells/s (wall) | kernel cells/CPU-s | kernel slots/s | baseline cells/s (wall) "
          "| baseline cells/CPU-s | speed-up (wall) | efficiency kernel | efficiency baseline |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['feedback']} | {r['psi']:g} | {r['kernel_cells_per_s']:.3g} | {r['kernel_cells_per_cpu_s']:.3g} | "
              f"{r['kernel_slots_per_s']:.3g} | {r['baseline_cells_per_s']:.3g} | {r['baseline_cells_per_cpu_s']:.3g} | "
              f"{r['speedup']:.0f}x | {r['kernel_efficiency_same_length_as_baseline']:.4f} | "
              f"{r['baseline_efficiency']:.4f} |")
    print(f"\nFig. 8 point (INSTCAP, Delta=40, Bmax=10, psi=20) to a 95% half-width < 1%: "
          f"{fig8['seconds']:.2f} s wall, {fig8['replications']} replications x 2000 s, "
          f"efficiency {fig8['efficiency']:.4f} +/- {fig8['half_width']:.4f} "
          f"({100 * fig8['rel_half_width']:.2f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
