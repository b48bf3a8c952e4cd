"""Benchmark of :func:`tcpabr_model.sweep.run_sweep` (issue 7 targets).

Measures, for a sweep of small simulation points (``Scenario.from_normalized``, EFFCAP
and INSTCAP, several buffers and psi values, 2 replications of ``--duration-units``
packet times each, about 0.2-0.5 s per point):

1. the serial sweep in this process (``workers=1``), the reference time T_serial;
2. the same sweep on a local Dask cluster with k = 1, 2, ... workers
   (``LocalCluster(n_workers=k, threads_per_worker=1)``), workers warmed up (package
   imported, numba kernels loaded) before timing, cluster start-up reported apart;
   speed-up S_k = T_dask(1) / T_dask(k) and efficiency S_k / k (target >= 0.8);
3. the local process pool (``workers=k``, k > 1; ``workers=1`` is the serial run) for
   comparison, S_k against T_serial;
4. re-running the finished sweep from its disk cache (target < 1 s), best of 3.

Every variant must give the same table (checked: a mismatch is printed, the numbers are
still reported).  Scripts here measure; they never assert.

Usage::

    python benchmarks/bench_sweep.py [--points 200] [--duration-units 250000] [--workers 1,2]
                                     [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def make_grid(points: int, duration_units: float):
    """``points`` simulation points: psi (log-spaced 1..100) x feedback x buffer."""
    from tcpabr_model.sweep import Grid

    bmaxes = [6, 8, 10, 12, 14]
    feedbacks = ["instcap", "effcap"]
    n_psi = max(1, int(np.ceil(points / (len(bmaxes) * len(feedbacks)))))
    g = Grid({"psi": [float(v) for v in np.geomspace(1.0, 100.0, n_psi)], "feedback": feedbacks,
              "bmax": bmaxes},
             fixed={"delta": 40, "duration_units": duration_units, "warmup_units": 200, "replications": 2})
    return Grid.from_points(g.points[:points])


def _warm() -> bool:
    """Import the package and load the numba kernels in a worker (run before timing)."""
    from tcpabr_model.sweep import run_sweep

    run_sweep("simulation", [{"psi": 2, "delta": 40, "feedback": f, "duration_units": 500,
                              "replications": 1} for f in ("instcap", "effcap")],
              workers=1, progress=False)
    return True


def _same(a, b) -> bool:
    cols = [c for c in a.columns if c not in ("seconds", "cached")]
    try:
        import pandas as pd

        pd.testing.assert_frame_equal(a[cols].reset_index(drop=True), b[cols].reset_index(drop=True))
        return True
    except AssertionError:
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--duration-units", type=float, default=250_000.0,
                    help="simulated packet times per replication (2 replications per point)")
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts k")
    ap.add_argument("--quick", action="store_true", help="40 points of 50000 units (a smoke run)")
    ap.add_argument("--json", action="store_true", help="also print the numbers as JSON")
    args = ap.parse_args(argv)
    if args.quick:
        args.points, args.duration_units = 40, 50_000.0
    ks = [int(k) for k in args.workers.split(",")]

    from distributed import Client, LocalCluster

    from tcpabr_model.sweep import run_sweep

    grid = make_grid(args.points, args.duration_units)
    _warm()
    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = (float("nan"),) * 3
    print(f"# machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")
    print(f"# sweep: {len(grid)} simulation points, 2 replications x {args.duration_units:g} packet times each")

    res = {"points": len(grid), "duration_units": args.duration_units, "cores": os.cpu_count(),
           "load_at_start": load[0], "rows": []}

    t0 = time.perf_counter()
    ref = run_sweep("simulation", grid, seed=1, workers=1, progress=False)
    t_serial = time.perf_counter() - t0
    per_point = float(ref.seconds.mean())
    res["serial_s"] = t_serial
    res["mean_point_s"] = per_point
    print(f"serial (workers=1, this process): {t_serial:.2f} s, {per_point:.3f} s per point "
          f"({int((ref.status != 'ok').sum())} failed points)")

    t_dask = {}
    busy = {("serial", 1): float(ref.seconds.sum())}
    for k in ks:
        t0 = time.perf_counter()
        with LocalCluster(n_workers=k, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
                Client(cl) as client:
            t_start = time.perf_counter() - t0
            client.run(_warm)
            t0 = time.perf_counter()
            df = run_sweep("simulation", grid, seed=1, client=client, progress=False)
            t = time.perf_counter() - t0
        t_dask[k] = t
        busy[("dask", k)] = float(df.seconds.sum())
        ok = _same(ref, df)
        res["rows"].append({"runner": "dask", "k": k, "seconds": t, "startup_s": t_start, "same_table": ok,
                            "busy_s": busy[("dask", k)]})
        print(f"dask k={k}: {t:.2f} s (cluster start {t_start:.1f} s, excluded){'' if ok else '  TABLE DIFFERS'}")

    t_pool = {}
    for k in ks:
        if k == 1:  # workers=1 runs serially in this process: that is the serial row
            continue
        t0 = time.perf_counter()
        df = run_sweep("simulation", grid, seed=1, workers=k, progress=False)
        t = time.perf_counter() - t0
        t_pool[k] = t
        busy[("pool", k)] = float(df.seconds.sum())
        ok = _same(ref, df)
        res["rows"].append({"runner": "pool", "k": k, "seconds": t, "same_table": ok, "busy_s": busy[("pool", k)]})
        print(f"process pool k={k}: {t:.2f} s{'' if ok else '  TABLE DIFFERS'}")

    with tempfile.TemporaryDirectory(prefix="bench_sweep_cache_") as cache:
        t0 = time.perf_counter()
        first = run_sweep("simulation", grid, seed=1, workers=max(ks), cache_dir=cache, progress=False)
        t_fill = time.perf_counter() - t0
        reruns = []
        for _ in range(3):
            t0 = time.perf_counter()
            again = run_sweep("simulation", grid, seed=1, workers=max(ks), cache_dir=cache, progress=False)
            reruns.append(time.perf_counter() - t0)
        ok = bool(again.cached.all()) and _same(first, again)
    res["cache_fill_s"] = t_fill
    res["cache_rerun_s"] = min(reruns)
    print(f"cache: first run {t_fill:.2f} s (pool k={max(ks)}, writing {len(grid)} files), "
          f"re-run {min(reruns):.3f} s (best of 3){'' if ok else '  NOT ALL CACHED / TABLE DIFFERS'}")

    print()
    # "busy" = sum of the points' own compute times; busy / (k * wall) is the share of the
    # k workers' wall time spent inside the points (1 = no dispatch overhead, whatever
    # the machine's load did to the points themselves)
    print("| runner | k workers | wall s | speed-up | efficiency (speed-up / k) | sum of point times s | busy / (k wall) |")
    print("|---|---|---|---|---|---|---|")
    b = busy[("serial", 1)]
    print(f"| serial, this process | 1 | {t_serial:.1f} | 1.00 (reference of the pool) | - | {b:.1f} | "
          f"{b / t_serial:.2f} |")
    base = t_dask[ks[0]] * ks[0] if ks[0] != 1 else t_dask[1]
    for k in ks:
        s = base / t_dask[k]
        b = busy[("dask", k)]
        print(f"| Dask LocalCluster | {k} | {t_dask[k]:.1f} | {s:.2f} (vs Dask k=1) | {s / k:.2f} | {b:.1f} | "
              f"{b / (k * t_dask[k]):.2f} |")
    for k in t_pool:
        s = t_serial / t_pool[k]
        b = busy[("pool", k)]
        print(f"| process pool | {k} | {t_pool[k]:.1f} | {s:.2f} (vs serial) | {s / k:.2f} | {b:.1f} | "
              f"{b / (k * t_pool[k]):.2f} |")
    print(f"| cache re-run ({len(grid)} points) | - | {min(reruns):.3f} | - | - | - | - |")
    try:
        load = os.getloadavg()
        print(f"\n# load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        res["load_at_end"] = load[0]
    except OSError:  # pragma: no cover
        pass
    if args.json:
        print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
