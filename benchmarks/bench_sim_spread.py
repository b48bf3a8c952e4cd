"""Run-to-run spread of the single-bottleneck sim kernel on this machine.

Runs the same replication ``--runs`` times back to back (same seed, compilation
excluded) for two seed 004 scenarios and prints every cells/s figure and the best.  On a
shared VM a single run can be much slower than the best; use this before reading a
difference between two single runs of ``bench_net.py`` as a change of the code.
Scripts here measure; they never assert.

Usage::

    python benchmarks/bench_sim_spread.py [--runs 8] [--duration 20000]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from tcpabr_model.sim import Scenario  # noqa: E402
from tcpabr_model.sim.kernels import fast_path as K  # noqa: E402
from tcpabr_model.sim.driver import run_replication  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--duration", type=float, default=20000.0, help="time units per run")
    a = ap.parse_args(argv)
    run_replication(Scenario.from_normalized(duration=5.0), np.random.default_rng(0), trace=False)
    for fb, psi in [("effcap", 1.0), ("instcap", 20.0)]:
        sc = Scenario.from_normalized(delta=40, bmax=10, psi=psi, feedback=fb, duration=a.duration)
        child = np.random.SeedSequence(1).spawn(1)[0]
        rates = []
        for _ in range(a.runs):
            o, dt, _ = run_replication(sc, np.random.default_rng(child), trace=False)
            st = o[0]
            cells = int(st[:, K.S_CSENT].sum() + st[:, K.S_CSERVED].sum() + st[:, K.S_CDROP].sum())
            rates.append(cells / dt)
        print(f"{fb} psi={psi:g}: " + " ".join(f"{r:.3g}" for r in rates)
              + f"  cells/s; best {max(rates):.3g}, worst {min(rates):.3g}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
