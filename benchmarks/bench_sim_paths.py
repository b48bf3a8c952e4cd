"""Fast path against general kernel, and the network presets of issue 14's targets, in CPU
seconds (scripts here measure; they never assert).

1. The single-bottleneck configurations of ``bench_sim.py`` (INSTCAP / EFFCAP at psi 1 and
   20; Delta 40, Bmax 10, 500 s): cells simulated per CPU second of the fast path
   (``simulate``) and of the general kernel on ``Scenario.to_network()`` (same counters),
   and their ratio;
2. one replication of seed 000 WAN (15 SACK sources, 20 s), ``seed002_gfr_15tcp`` (20 s)
   and the seed 003 no-VBR backbone (``abr_backbone_novbr_buf1000``, 10 s): CPU seconds.

CPU time (``time.process_time``) rather than wall time, because the reference machine is a
shared 2-core VM: wall times there move by 2x with the other users' load, CPU time by a
few per cent.  Best of ``--repeat`` runs, configurations interleaved.  Usage::

    python benchmarks/bench_sim_paths.py [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from tcpabr_model.sim import Scenario, preset, simulate  # noqa: E402
from tcpabr_model.sim.arrays import layout as L  # noqa: E402
from tcpabr_model.sim.driver import run_network_replication  # noqa: E402

CASES = [("instcap", 1.0), ("instcap", 20.0), ("effcap", 1.0), ("effcap", 20.0)]
PRESETS = [("seed000_wan_15src_buf12000_gr0_sd_sack", 20.0), ("seed002_gfr_15tcp", 20.0),
           ("abr_backbone_novbr_buf1000", 10.0)]


def _cpu(fn):
    t0 = time.process_time()
    r = fn()
    return r, time.process_time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    scs = {f"{fb}-psi{psi:g}": Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=fb, duration=500.0)
           for fb, psi in CASES}
    for sc in scs.values():     # compile / warm up
        simulate(sc.with_(duration=5.0), replications=1, seed=1)
        run_network_replication(sc.with_(duration=5.0).to_network(), np.random.default_rng(1))
    best = {}
    for _ in range(a.repeat):
        for k, sc in scs.items():
            r, dt = _cpu(lambda: simulate(sc, replications=1, seed=1))
            best[k + " fast"] = max(best.get(k + " fast", 0.0), r.cells_simulated / dt)
            (out, _, _), dt = _cpu(lambda: run_network_replication(sc.to_network(), np.random.default_rng(
                np.random.SeedSequence(1).spawn(1)[0])))
            st, pst = out[0], out[4]
            cells = int(st[:, L.S_CSENT].sum() + pst[:, L.PS_SERVED0:L.PS_SERVED0 + 3].sum()
                        + pst[:, L.PS_DROP0:L.PS_DROP0 + 3].sum())
            best[k + " general"] = max(best.get(k + " general", 0.0), cells / dt)
        for name, dur in PRESETS:
            net = preset(name).network.with_(duration=dur)
            _, dt = _cpu(lambda: run_network_replication(net, np.random.default_rng(1)))
            best[name + " cpu_s"] = min(best.get(name + " cpu_s", 1e99), dt)
    for k in scs:
        best[k + " general/fast"] = best[k + " general"] / best[k + " fast"]
    if a.json:
        print(json.dumps(best, indent=1))
    else:
        for k, v in best.items():
            print(f"{k:48s} {v:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
