"""Cost of INSTCAP's chains (``feedback='instcap'``) over a measured link's within-epoch service
patterns, the study's setting (analytics/traces.py: 4 patterns per level, rtt 50 ms, the window
of ``trace_study.window_packets``); a script: it measures, never asserts.

Each point is one half of a shared cellular trace fitted by ``trace_study.fit_link(half, rtt,
patterns=4)`` and one buffer ``B_max``; one ``analyze`` with the skeleton cache cleared.  Columns:
the exact state count (``estimate_chain``, its own call, "count s"), ``build_seconds`` of the
analysis (the build; the count is made before it and cached, unless ``--cold``), the SCC blocks' preparation and the GMRES products of
the matrix-free structured solve ("solve s", ``solve_seconds``), the wall time of the whole
``analyze`` and the process's peak resident memory (``ru_maxrss``; each tree runs its points
in a fresh process).

``--baseline DIR`` (repeatable) times other checkouts of the package in the same run (for
example ``git worktree add /tmp/old <commit>``): each repeat runs the baselines and this tree
alternately, each in a fresh process with ``PYTHONPATH`` set to its tree (numba compiled
beforehand by a small analysis of the same link); the best of the repeats is reported, and
the last bits of the results are compared (and the largest relative difference of the three
bounds, prediction, conservative and optimistic, printed).  BLAS threads are left as the environment sets
them (``OPENBLAS_NUM_THREADS``).

    python benchmarks/bench_markov_instcap.py [--baseline DIR ...] [--repeat 1] [--points SPEC ...]

``SPEC`` is ``trace:half:bmax`` (half 0 or 1), default the three points below, or
``trace:half:bmax:none`` for TCP alone with the study's 8 patterns per level (the chains whose
loss-free entries dominate the memory; docs/model.md sec. 5a item 9).  The peak memory is the
process's, over its points so far: give a large point alone (``--points SPEC``) to read its own.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from _trees import named_trees, run_child

HERE = Path(__file__).resolve().parent.parent
SHARED = HERE.parent / "shared" / "traces"
POINTS = ["TMobile-LTE-short.down:0:5", "TMobile-UMTS-driving.down:0:5", "Verizon-LTE-short.down:0:5"]


def measure(points: list[str], rtt: float, shared: str, cold: bool = False,
            window_tail: float | None = None, max_states: int = 5_000_000) -> list[dict]:
    """One process: every point once, after a small analysis that compiles the kernels."""
    import resource
    import time

    from tcpabr_model.capacity import read_trace
    from tcpabr_model.errors import ChainTooLargeError
    from tcpabr_model.markov import analyze, estimate_chain
    from tcpabr_model.markov import estimate as _estimate
    from tcpabr_model.markov import skeleton as _skeleton
    from tcpabr_model.trace_study import fit_link, link_scenario, trace_halves

    out = []
    compiled = False
    for spec in points:
        name, half, bmax, *fb = spec.split(":")
        fb = fb[0] if fb else "instcap"
        link = fit_link(trace_halves(read_trace(str(Path(shared) / name)))[int(half)], rtt,
                        patterns=8 if fb == "none" else 4)
        if not compiled:
            analyze(link_scenario(link, 2, fb, wmax=16))     # compile (or load) the kernels
            compiled = True
        sc = link_scenario(link, int(bmax), fb, max_states=max_states)
        _skeleton._CACHE.clear()

        def timed_analysis():
            """(result or None, refusal or None, seconds) of one analyze() of ``sc``."""
            t0 = time.perf_counter()
            try:
                return analyze(sc, window_tail=window_tail), None, time.perf_counter() - t0
            except ChainTooLargeError as e:
                return None, e, time.perf_counter() - t0

        if cold:   # the analysis as a user calls it: its own count (or probe) inside "total"
            _estimate._COUNTS.clear()
            r, err, total = timed_analysis()
            _estimate._COUNTS.clear()
        t0 = time.perf_counter()
        est = estimate_chain(sc)
        t_count = time.perf_counter() - t0
        if not cold:
            _skeleton._CACHE.clear()
            r, err, total = timed_analysis()
        if err is not None:   # a tree that refuses the chain: say so, time the rest
            out.append({"point": spec, "wmax": sc.wmax, "states": est.n_states, "count": t_count,
                        "refused": str(err), "total": float("inf"),
                        "rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6})
            continue
        out.append({"point": spec, "wmax": r.scenario.get("window_solved", sc.wmax), "states": r.n_states,
                    "count": t_count, "build": r.build_seconds,
                    "solve": r.solve_seconds, "total": total,
                    "rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
                    "bits": [r.prediction.hex(), r.conservative.hex(), r.optimistic.hex(),
                             r.loss_probability.hex()], "states_counted": est.n_states})
    return out


def run_tree(tree: Path, args) -> list[dict]:
    return run_child(__file__, tree, ["--rtt", str(args.rtt), "--shared", str(args.shared), "--points", *args.points]
                     + (["--cold"] if args.cold else [])
                     + (["--window-tail", str(args.window_tail)] if args.window_tail is not None else [])
                     + ["--max-states", str(args.max_states)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, action="append", default=[],
                    help="another checkout of the package, timed in the same run (repeatable)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--rtt", type=float, default=0.05)
    ap.add_argument("--shared", default=str(SHARED), help="folder of the shared traces")
    ap.add_argument("--points", nargs="+", default=POINTS)
    ap.add_argument("--cold", action="store_true",
                    help="time analyze() first, with no count made (its own count or probe in 'total', as a "
                         "user meets it); the count column is then timed apart")
    ap.add_argument("--max-states", type=int, default=5_000_000,
                    help="the chains' max_states (the study's INSTCAP limit is 2e7: analytics/traces.py)")
    ap.add_argument("--window-tail", type=float, default=None,
                    help="analyze(..., window_tail=) as the study runs it (1e-12; docs/model.md sec. 19): the "
                         "chains of the caps the search tries, all timed; 'W_max' is then the cap solved")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.points, args.rtt, args.shared, args.cold, args.window_tail, args.max_states)))
        return 0
    trees = named_trees(args.baseline, HERE)
    best: dict[tuple, dict] = {}
    for _ in range(args.repeat):
        for name, tree in trees:
            for row in run_tree(tree, args):
                key = (name, row["point"])
                if key not in best or row["total"] < best[key]["total"]:
                    best[key] = row
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; trees: " +
          ", ".join(f"{n} = {t}" for n, t in trees))
    print("| tree | point (trace:half:B_max) | W_max | states | count s | build s | solve s | total s | peak GB | "
          "prediction |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p in args.points:
        for name, _ in trees:
            r = best[(name, p)]
            if "refused" in r:
                print(f"| {name} | {p} | {r['wmax']} | {r['states']} | {r['count']:.2f} | refused: "
                      f"{r['refused'][:160]} | | | {r['rss_gb']:.2f} | |")
                continue
            print(f"| {name} | {p} | {r['wmax']} | {r['states']} | {r['count']:.2f} | {r['build']:.2f} | "
                  f"{r['solve']:.2f} | {r['total']:.2f} | {r['rss_gb']:.2f} | {r['bits'][0]} |")
    for p in args.points:
        ref = best[("this tree", p)]
        for name, _ in trees[:-1]:
            a = best[(name, p)]
            if "refused" in a or "refused" in ref:
                continue
            same = "the same four results bit for bit" if a["bits"] == ref["bits"] else \
                "RESULTS DIFFER in the last bits: " + ", ".join(f"{x} vs {y}" for x, y in zip(a["bits"], ref["bits"])
                                                                 if x != y)
            rel = max(abs(float.fromhex(x) - float.fromhex(y)) / abs(float.fromhex(y))
                      for x, y in zip(a["bits"][:3], ref["bits"][:3]))
            print(f"{p}: {name} {a['total']:.2f} s -> this tree {ref['total']:.2f} s "
                  f"({a['total'] / ref['total']:.1f}x); {same}; max relative difference of the three bounds "
                  f"{rel:.2g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
