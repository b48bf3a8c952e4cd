"""Trace replay against the fast path on the same link (issue 15 item 4; measures, never asserts).

A Mahimahi trace (default: the shared TMobile-LTE-short trace when present, else the test
suite's ``tests/data/markov3_outage.down``) is replayed as the bottleneck's service
(``Scenario(capacity=trace)``: 1-ms bins, slot = one cell time at the busiest ms).  It is
compared with the fast path driven by the paper's process on

* ``same-slot``: the same link: the same slot (peak rate) and the same mean rate, i.e. the
  two-state process pinned in its low state (``rate_ratio`` = the trace's mean / peak,
  ``tau`` = 1e9 s, so no change in the run): the kernel and everything but the capacity
  process are identical, so the ratio is the cost of replaying the trace;
* ``two-state``: the same slot, the two-state process at ``psi`` 20 whose mean is the
  trace's mean when that is possible (``rate_ratio = 2 mean/peak - 1 > 0``; skipped
  otherwise);
* ``alternating``: a synthetic trace of 26 and 25 opportunities in alternate ms (a capacity
  change every ms, mean / peak 0.98) against the same-slot constant link at its mean: both
  saturate the link and carry the same cells, so this isolates the capacity process's cost;
* ``own-slot``: a constant link at the trace's mean rate with its own slot (one cell time
  at the mean): not the same link, reported to show what the trace's peak-to-mean ratio
  costs (every replay slot is a cell time at the peak).

INSTCAP over a bursty trace carries fewer cells than over a constant link in the same
simulated time, while the kernel still steps every slot in which a source holds cells, so
cells per CPU second mixes the cost of the capacity process with the throughput TCP
achieves.  Further views: CPU seconds per simulated second (the same slots), and a
**const-source** pair: an ABR source held at a constant rate (``feedback='constant'``, 0.9 x
the trace's mean) with a buffer and window large enough that nothing is lost (the cells
still differ: TCP's fixed RTO of 2 x rtt fires during the trace's deep fades).

Cells simulated (sent + served + dropped) per CPU second of one replication
(``run_replication``, path generation included), best of ``--repeat``, configurations
interleaved.  One INSTCAP connection, rtt ``--rtt`` s, buffer ``--bmax`` packets, maximum
window ``--wmax`` packets (large: TCP is not window-limited).  Usage::

    python benchmarks/bench_trace_replay.py [--trace PATH] [--duration S] [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from tcpabr_model.capacity import Trace, read_trace  # noqa: E402
from tcpabr_model.sim import Scenario, TcpConfig  # noqa: E402
from tcpabr_model.sim.arrays import layout as L  # noqa: E402
from tcpabr_model.sim.capacity import trace_levels  # noqa: E402
from tcpabr_model.sim.driver import run_replication  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = "/work/shared/traces/TMobile-LTE-short.down"
SHIPPED = os.path.join(HERE, "..", "tests", "data", "markov3_outage.down")


def _cells_per_cpu_second(sc: Scenario, seed: int) -> tuple[float, int, float]:
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    t0 = time.process_time()
    out, _, _ = run_replication(sc, rng, trace=False)
    dt = time.process_time() - t0
    st = out[0]
    cells = int(st[:, L.S_CSENT].sum() + st[:, L.S_CSERVED].sum() + st[:, L.S_CDROP].sum())
    return cells / dt, cells, dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=SHARED if os.path.exists(SHARED) else SHIPPED)
    ap.add_argument("--duration", type=float, default=60.0, help="simulated seconds per run (default 60)")
    ap.add_argument("--rtt", type=float, default=0.1, help="round-trip propagation delay, s (default 0.1)")
    ap.add_argument("--bmax", type=int, default=50, help="buffer, packets (default 50)")
    ap.add_argument("--wmax", type=int, default=1 << 14, help="maximum window, packets (default 16384)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    tr = read_trace(a.trace)
    _, _, peak = trace_levels(tr)
    mean_norm = tr.mean_rate / 1000.0 / peak            # mean / busiest ms
    common = dict(feedback="instcap", rtt=(a.rtt,), buffer_packets=a.bmax, duration=a.duration, warmup=1.0,
                  tcp=TcpConfig(wmax=a.wmax))
    replay = Scenario(capacity=tr, **common)
    cases = {
        "trace replay": replay,
        "same-slot constant at the mean": Scenario(high_rate=replay.high_rate, rate_ratio=mean_norm, tau=1e9,
                                                   initial_state="low", **common),
        "own-slot constant at the mean": Scenario(high_rate=replay.high_rate * mean_norm, rate_ratio=1.0,
                                                  tau=1e9, initial_state="high", **common),
    }
    big = dict(common, feedback="constant", initial_rate=0.9 * mean_norm, buffer_packets=100_000)
    cases["const-source trace replay"] = Scenario(capacity=tr, **big)
    cases["const-source same-slot constant"] = Scenario(high_rate=replay.high_rate, rate_ratio=mean_norm, tau=1e9,
                                                        initial_state="low", **big)
    alt = Trace(np.repeat(np.arange(1, 2001), np.where(np.arange(1, 2001) % 2 == 1, 26, 25)), name="alternating")
    alt_mean = alt.mean_rate / 1000.0 / 26
    cases["alternating trace replay"] = Scenario(capacity=alt, **common)
    cases["alternating same-slot constant"] = Scenario(high_rate=cases["alternating trace replay"].high_rate,
                                                       rate_ratio=alt_mean, tau=1e9, initial_state="low", **common)
    if 2 * mean_norm - 1 > 0:
        cases["same-slot two-state psi 20"] = Scenario(high_rate=replay.high_rate, rate_ratio=2 * mean_norm - 1,
                                                       tau=20 * a.rtt, **common)
    for sc in cases.values():      # compile / warm up
        run_replication(sc.with_(duration=1.0), np.random.default_rng(0), trace=False)
    best: dict = {}
    cells: dict = {}
    cpu: dict = {}
    for _ in range(a.repeat):
        for k, sc in cases.items():
            v, n, dt = _cells_per_cpu_second(sc, 1)
            best[k] = max(best.get(k, 0.0), v)
            cpu[k] = min(cpu.get(k, 1e99), dt)
            cells[k] = n
    res = {"trace": os.path.basename(tr.name), "period_ms": tr.period_ms, "peak_per_ms": peak,
           "mean_over_peak": mean_norm, "duration_s": a.duration, "cells_per_cpu_s": best, "cells": cells,
           "replay / same-slot constant": best["trace replay"] / best["same-slot constant at the mean"],
           "replay / own-slot constant": best["trace replay"] / best["own-slot constant at the mean"],
           "cpu_s_per_run": cpu,
           "same-slot constant / replay, CPU s per simulated s": cpu["same-slot constant at the mean"]
           / cpu["trace replay"],
           "const-source replay / constant": best["const-source trace replay"]
           / best["const-source same-slot constant"],
           "alternating replay / constant": best["alternating trace replay"]
           / best["alternating same-slot constant"]}
    if "same-slot two-state psi 20" in best:
        res["replay / same-slot two-state"] = best["trace replay"] / best["same-slot two-state psi 20"]
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        print(f"trace {res['trace']}: period {tr.period_ms} ms, busiest ms {peak} opportunities, "
              f"mean / peak {mean_norm:.4f}, {a.duration:g} s per run, best of {a.repeat}")
        for k, v in best.items():
            print(f"  {k:34s} {v:12,.0f} cells/CPU s  ({cells[k]:,} cells, {cpu[k]:.3f} CPU s)")
        for k in [k for k in res if k.startswith(("replay /", "same-", "const-", "alternating"))]:
            print(f"  {k:52s} {res[k]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
