"""Are sweep points slower inside a Dask worker than in the calling process?

``bench_sweep.py`` saw the summed point time of a 200-point sweep at 22.3 s serially and
28.5 s inside Dask workers.  This script separates a worker effect from machine noise:
it runs the same small simulation sweep in ``--rounds`` interleaved rounds, each round
once serially in this process, once on a one-worker ``LocalCluster`` in its own process
and once on a one-worker in-process (thread) ``LocalCluster``, and reports per runner the
median and the minimum of the summed point times (``seconds`` column: the points' own
compute, dispatch excluded).  The clusters are started and warmed once, before timing.
Scripts here measure; they never assert.

Usage::

    python benchmarks/bench_worker_overhead.py [--rounds 6] [--points 40] [--duration-units 250000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_sweep import _warm, make_grid  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--points", type=int, default=40)
    ap.add_argument("--duration-units", type=float, default=250_000.0)
    args = ap.parse_args(argv)

    from distributed import Client, LocalCluster

    from tcpabr_model.sweep import run_sweep

    grid = make_grid(args.points, args.duration_units)
    _warm()
    times: dict[str, list[float]] = {"serial, this process": [], "Dask worker process": [],
                                     "Dask worker thread (in-process)": []}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cp, \
            Client(cp) as c_proc, \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as ct, \
            Client(ct) as c_thread:
        c_proc.run(_warm)
        for r in range(args.rounds):
            for name, kw in (("serial, this process", {"workers": 1}),
                             ("Dask worker process", {"client": c_proc}),
                             ("Dask worker thread (in-process)", {"client": c_thread})):
                df = run_sweep("simulation", grid, seed=1, progress=False, **kw)
                times[name].append(float(df.seconds.sum()))
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)

    print(f"\n# {len(grid)} points x {args.rounds} rounds, {os.cpu_count()} cores; summed point time per sweep")
    print("| runner | median s | min s | max s |")
    print("|---|---|---|---|")
    for name, v in times.items():
        print(f"| {name} | {statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
