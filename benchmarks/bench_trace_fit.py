"""Benchmark trace fitting: read + bin + fit + report of a 200,000-line Mahimahi trace.

Run:  python benchmarks/bench_trace_fit.py [--repeat 5]

Target (issue 15): fit of a 200,000-line trace < 1 s (also with ``order=2``, issue 23).  The trace is synthetic (a seeded
8-level chain, 0.1 s epochs, 200,000 opportunities written to a temporary file); the
shared TMobile-LTE-short trace (194,846 lines) is timed too when ../shared/traces exists.
Cases run interleaved, one warm-up each; the table gives the best and the median of
``--repeat`` rounds.  Measures only; asserts nothing.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without install
import tcpabr_model.capacity as cap  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces" / "TMobile-LTE-short.down"


def synthetic_200k(path: Path) -> int:
    """Write an 8-level trace with ~200,000 lines (levels 0..2800 packets/s, sticky chain)."""
    k = 8
    rng = np.random.default_rng(0)
    w = rng.random((k, k)) + np.eye(k) * 6.0
    P = w / w.sum(axis=1, keepdims=True)
    levels = np.linspace(0.0, 2800.0, k)  # mean ~1400 packets/s, integer packets per 0.1 s
    m = cap.from_arrays(levels, P, epoch=0.1, time_unit=1.0, packet_bytes=1500)
    n_epochs = int(200_000 / (m.mean * 0.1))
    t = cap.synthetic_trace(m, n_epochs, seed=1)
    t = cap.Trace(t.times_ms[:200_000], name="synthetic")
    cap.write_trace(t, path)
    return t.n_opportunities


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        syn = Path(d) / "synthetic.down"
        n_lines = synthetic_200k(syn)
        cases = {
            f"read_trace, synthetic {n_lines:,} lines": lambda: cap.read_trace(syn),
            f"fit_trace auto K (1..8, EC criterion), synthetic {n_lines:,} lines, from file":
                lambda: cap.fit_trace(syn, epoch=0.1),
            f"fit_trace K=8, synthetic {n_lines:,} lines, from file": lambda: cap.fit_trace(syn, states=8, epoch=0.1),
            f"fit_trace auto K, order 2, synthetic {n_lines:,} lines, from file":
                lambda: cap.fit_trace(syn, epoch=0.1, order=2),
        }
        if SHARED.exists():
            cases["fit_trace auto K, TMobile-LTE-short (194,846 lines), from file"] = lambda: cap.fit_trace(SHARED, epoch=0.1)
            cases["fit_trace auto K, TMobile-LTE-short, epoch 0.02 s (7,000 epochs)"] = \
                lambda: cap.fit_trace(SHARED, epoch=0.02)
            cases["fit_trace auto K, order 2, TMobile-LTE-short, epoch 0.02 s"] = \
                lambda: cap.fit_trace(SHARED, epoch=0.02, order=2)
        for fn in cases.values():
            fn()  # warm-up (imports, numba caches of the closed forms)
        times = {k: [] for k in cases}
        for _ in range(args.repeat):
            for k, fn in cases.items():  # interleaved
                t = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t)
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"repeat {args.repeat}\n")
    print("| case | best (s) | median (s) |")
    print("| --- | ---: | ---: |")
    for k, ts in times.items():
        print(f"| {k} | {min(ts):.3f} | {statistics.median(ts):.3f} |")


if __name__ == "__main__":
    main()
