"""Benchmark of the network simulator (scripts here measure; they never assert).

1. The single-bottleneck scenarios of ``bench_sim.py`` (Fig. 8's point, INSTCAP / EFFCAP
   / TCP alone at psi = 20 and psi = 1): cells per second of the ``tcpabr_model.sim``
   kernel ("before") and of the network kernel running the same configuration built by
   ``from_sim_scenario`` ("after"), on the same capacity path, in the same run; the two
   produce identical counters (checked here too).
2. A 20-second WAN run of seed 000 with 15 SACK sources at 155.52 Mbps, VBR 300 ms on/off,
   Selective Drop, 12000 cells (``seed000_network('wan', 15, 12000, 0.3, 0.0, 'sd')``):
   wall time of one replication (target < 30 s on one core).
3. Seed 002's 15-TCP GFR experiment for its stated 20 s (``seed002_gfr_15tcp``): wall time
   of one replication (target < 60 s).

Compilation is excluded (a warm-up call first).  Usage::

    python benchmarks/bench_net.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from tcpabr_model.sim import from_sim_scenario, simulate_network  # noqa: E402
from tcpabr_model.sim.arrays import layout as L  # noqa: E402
from tcpabr_model.sim import preset
from tcpabr_model.sim.presets.ubr_gfr import seed000_network  # noqa: E402
from tcpabr_model.sim.driver import run_network_replication  # noqa: E402
from tcpabr_model.sim import Scenario  # noqa: E402
from tcpabr_model.sim.kernels import fast_path as K  # noqa: E402
from tcpabr_model.sim.driver import run_replication  # noqa: E402


def best(f, repeats):
    out, wall = None, float("inf")
    for _ in range(repeats):
        o, dt = f()
        if dt < wall:
            out, wall = o, dt
    return out, wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter single-bottleneck runs")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    dur = 2000.0 if a.quick else 20000.0
    # compile / load caches outside the timings
    sc0 = Scenario.from_normalized(duration=5.0)
    run_replication(sc0, np.random.default_rng(0), trace=False)
    run_network_replication(from_sim_scenario(sc0), np.random.default_rng(0))
    simulate_network(seed000_network("wan", 2, duration=0.01), 1)
    rows = []
    for fb, psi in [("instcap", 20.0), ("effcap", 20.0), ("none", 20.0), ("instcap", 1.0), ("effcap", 1.0)]:
        sc = Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=fb, duration=dur)
        net = from_sim_scenario(sc)
        child = np.random.SeedSequence(1).spawn(1)[0]

        def old():
            o, dt, _ = run_replication(sc, np.random.default_rng(child), trace=False)
            return o, dt

        def new():
            o, dt, _ = run_network_replication(net, np.random.default_rng(child))
            return o, dt

        o1, w1 = best(old, a.repeats)
        o2, w2 = best(new, a.repeats)
        st1, st2 = o1[0], o2[0]
        cells = int(st1[:, K.S_CSENT].sum() + st1[:, K.S_CSERVED].sum() + st1[:, K.S_CDROP].sum())
        same = bool((st1[:, K.S_GOOD] == st2[:, L.S_GOOD]).all() and (st1[:, K.S_CDROP] == st2[:, L.S_CDROP]).all())
        rows.append({"scenario": f"{fb} psi={psi:g}", "cells": cells, "slots": sc.total_slots,
                     "sim_kernel_s": w1, "sim_cells_per_s": cells / w1, "net_kernel_s": w2,
                     "net_cells_per_s": cells / w2, "identical_counters": same})
    big = []
    for label, net in [("seed000 WAN 15 SACK sources, 20 s, VBR 300 ms, SD, 12000 cells",
                        seed000_network("wan", 15, 12000, 0.3, 0.0, "sd", "sack")),
                       ("seed002_gfr_15tcp, 20 s", preset("seed002_gfr_15tcp").network)]:
        t0 = time.perf_counter()
        r = simulate_network(net, replications=1, seed=1)
        wall = time.perf_counter() - t0
        big.append({"run": label, "slots": r.slots_simulated, "cells": r.cells_simulated, "wall_s": wall,
                    "kernel_s": r.kernel_seconds, "cells_per_s": r.cells_per_second,
                    "efficiency": r.efficiency.mean})
    info = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "load": os.getloadavg()}
    if a.json:
        print(json.dumps({"single_bottleneck": rows, "network": big, "info": info}, indent=2))
        return 0
    print(f"single bottleneck, {dur:g} s simulated (best of {a.repeats}); load {info['load'][0]:.1f}")
    print("| scenario | cells | sim kernel cells/s (before) | net kernel cells/s (after) | identical |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['scenario']} | {r['cells']:,} | {r['sim_cells_per_s']:.3g} | {r['net_cells_per_s']:.3g} | "
              f"{r['identical_counters']} |")
    print("\n| network run | slots | cells | wall s | kernel s | cells/s | efficiency |")
    print("|---|---|---|---|---|---|---|")
    for b in big:
        print(f"| {b['run']} | {b['slots']:,} | {b['cells']:,} | {b['wall_s']:.1f} | {b['kernel_s']:.1f} | "
              f"{b['cells_per_s']:.3g} | {b['efficiency']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
