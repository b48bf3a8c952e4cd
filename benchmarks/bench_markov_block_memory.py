"""Where the memory of a large INSTCAP analysis goes, and how alike its large SCC blocks are
(docs/model.md sec. 5a item 14); a script: it measures, never asserts.

One study point (``trace:half:bmax``, the study's fit at ``--rtt`` with 4 patterns per level and
its ``W_max``; default Verizon-LTE half A, 50 ms, ``B_max`` 47, 3.57 million states, about a
minute): the resident memory after each phase (skeleton built, SCC structure, blocks prepared,
analysis done; the peak sampled every 50 ms in a thread), the largest arrays of the skeleton and
the structure, and then the large blocks (``solvers.ITERATIVE_FROM`` states or more): their
windows, how many hold the same ``(B, D, R, S)`` combinations, their entries, and how many of a
block's states share a ``(B, D, R, S)`` (they differ in the build's flag ``z``, which
``Skeleton.states`` does not hold).

    python benchmarks/bench_markov_block_memory.py [--point Verizon-LTE-short.down:0:47] [--rtt 0.05]
"""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "traces"


def _rss_gb() -> float:
    import os

    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e9


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--point", default="Verizon-LTE-short.down:0:47")
    ap.add_argument("--rtt", type=float, default=0.05)
    ap.add_argument("--shared", default=str(SHARED), help="folder of the shared traces")
    args = ap.parse_args(argv)
    from tcpabr_model.capacity import read_trace
    from tcpabr_model.markov import analyze, skeleton_for, solvers
    from tcpabr_model.markov.kernels.iterative import block_rows
    from tcpabr_model.markov.skeleton import rate_chain
    from tcpabr_model.trace_study import fit_link, link_scenario, trace_halves

    name, half, bmax = args.point.split(":")
    link = fit_link(trace_halves(read_trace(str(Path(args.shared) / name)))[int(half)], args.rtt, patterns=4)
    analyze(link_scenario(link, 2, "instcap", wmax=16))     # compile (or load) the kernels
    sc = link_scenario(link, int(bmax), "instcap", max_states=20_000_000)
    peak, stop = [0.0], [False]

    def sampler():
        while not stop[0]:
            peak[0] = max(peak[0], _rss_gb())
            time.sleep(0.05)

    threading.Thread(target=sampler, daemon=True).start()
    t0 = time.perf_counter()

    def mark(label):
        print(f"| {label} | {time.perf_counter() - t0:.1f} | {_rss_gb():.2f} | {max(peak[0], _rss_gb()):.2f} |",
              flush=True)

    print(f"{args.point}, rtt {args.rtt:g} s, W_max {sc.wmax}\n")
    print("| phase | s | RSS GB | peak so far GB |\n|---|---|---|---|")
    mark("start")
    sk = skeleton_for(sc)
    mark(f"skeleton built ({sk.n_states:,} states)")
    s = solvers._structure(sk)
    mark("SCC structure")
    init = solvers._PreparedForward.__init__

    def timed_init(self, *a, **k):
        init(self, *a, **k)
        mark("blocks prepared (CSR, ILU(0))")

    solvers._PreparedForward.__init__ = timed_init
    try:
        r = analyze(sc)
    finally:
        solvers._PreparedForward.__init__ = init
    mark("analysis done")
    stop[0] = True
    print(f"\nprediction {r.prediction:.6f}\n\n| array | GB |\n|---|---|")
    for owner, items in (("skeleton", {f: getattr(sk, f) for f in sk.__dataclass_fields__}), ("structure", vars(s))):
        for f, v in items.items():
            nb = sum(a.nbytes for a in (v if isinstance(v, tuple) else (v,)) if isinstance(a, np.ndarray))
            if nb > 1e7:
                print(f"| {owner}.{f} | {nb / 1e9:.3f} |")
    sizes = np.diff(s.ptr)
    big = np.flatnonzero(sizes >= solvers.ITERATIVE_FROM)
    st = sk.states
    keys, wins, dups = {}, [], []
    for c in big:
        x = s.order[s.ptr[c]:s.ptr[c + 1]]
        w = st[x, 0] + st[x, 1] + st[x, 2]
        wins.append((int(w.min()), int(w.max()), int(st[x, 0].min())))
        k = np.sort(st[x, 1] * 10**12 + st[x, 2] * 10**6 + st[x, 3] * 10**3 + st[x, 4])   # (B, D, R, S)
        keys.setdefault(k.tobytes(), []).append(len(wins) - 1)
        dups.append(int(k.size - np.unique(k).size))
    Q = rate_chain(sc.rate_matrix, None, sk.n_levels)
    ro, rp, idx, val, dg = block_rows(s.order, s.ptr, sk.states, sk.nl_ptr, sk.nl_prob, sk.nl_t, Q, s.comp, s.pos,
                                      big.astype(np.int64))
    nnz = np.array([rp[ro[b + 1] + b] - rp[ro[b] + b] for b in range(big.size)])
    same = max(keys.values(), key=len)
    print(f"\n{big.size} blocks of {solvers.ITERATIVE_FROM} states or more, {int(nnz.sum()):,} entries; "
          "one window each: "
          f"{all(a == b for a, b, _ in wins)}")
    print(f"the largest group with the same (B, D, R, S) combinations: {len(same)} blocks, windows "
          f"{wins[same[-1]][0]}-{wins[same[0]][0]}, smallest A of a block {min(wins[i][2] for i in same)}-"
          f"{max(wins[i][2] for i in same)}, "
          f"{sizes[big[same[0]]]:,} states and {sorted(set(nnz[same].tolist()))} entries each, "
          f"{nnz[same].sum() / nnz.sum():.0%} of the blocks' entries; states sharing a (B, D, R, S) in a block: "
          f"{dups[same[0]]:,}")
    print(f"groups: {len(keys)} (sizes {sorted((len(v) for v in keys.values()), reverse=True)[:5]} ...)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
