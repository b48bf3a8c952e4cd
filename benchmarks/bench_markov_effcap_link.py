"""One analysis of a fitted link, timed in this process: EFFCAP(M, N) sampled once per round trip, INSTCAP or
TCP alone (benchmarks/README.md, "EFFCAP per round trip in the trace study"; docs/traces.md sec. 7.2v).

    PYTHONPATH=TREE python benchmarks/bench_markov_effcap_link.py TRACE HALF RTT B_MAX {effcap,instcap,none}
        [--m 2] [--n 1] [--tcp timeout-only|sack] [--traces-dir ../shared/traces]

The half (0 = A, 1 = B) of a trace fitted at epoch = RTT with 4 patterns per level
(``trace_study.fit_link``), analysed as the trace study does (``trace_study.analyze_link``, its window
tail, at most 5 x 10^6 states) after the kernels are compiled on the shipped test trace. Prints one JSON
line: the tree the package was imported from, the states, the seconds, the peak resident memory (GB)
and the prediction, the conservative bound and the mean queueing and source delays in hex (to compare
trees bit for bit). Run it once per tree in
a fresh process.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace")
    p.add_argument("half", type=int, choices=(0, 1))
    p.add_argument("rtt", type=float)
    p.add_argument("bmax", type=int)
    p.add_argument("feedback", choices=("effcap", "instcap", "none"))
    p.add_argument("--m", type=int, default=2)
    p.add_argument("--n", type=int, default=1)
    p.add_argument("--tcp", choices=("timeout-only", "sack"), default="timeout-only",
                   help="the chain's TCP (docs/model.md sec. 12; default the study's timeout-only)")
    p.add_argument("--traces-dir", default=str(ROOT.parent / "shared" / "traces"))
    a = p.parse_args(argv)
    import tcpabr_model
    from tcpabr_model.capacity import read_trace
    from tcpabr_model.trace_study import analyze_link, fit_link, trace_halves

    path = Path(a.trace) if Path(a.trace).exists() else Path(a.traces_dir) / a.trace
    if not path.exists():
        print(f"error: {path} does not exist (give --traces-dir or a path)", file=sys.stderr)
        return 2
    kw = {"effcap_m": a.m, "effcap_n": a.n} if a.feedback == "effcap" else {}
    kw["tcp"] = a.tcp
    warm = fit_link(read_trace(ROOT / "tests" / "data" / "markov3_outage.down"), 0.1, patterns=2)
    analyze_link(warm, 2, a.feedback, **kw)          # compile (or load) the kernels outside the timing
    link = fit_link(trace_halves(read_trace(str(path)))[a.half], a.rtt, patterns=4)
    t0 = time.perf_counter()
    r = analyze_link(link, a.bmax, a.feedback, max_states=5_000_000, **kw)
    sec = time.perf_counter() - t0
    print(json.dumps({"tree": str(Path(tcpabr_model.__file__).parents[1]), "point": f"{path.name}:{a.half}:{a.rtt}:"
                      f"{a.bmax}:{a.feedback}:{a.tcp}", "states": r.n_states, "seconds": round(sec, 2),
                      "peak_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2),
                      "prediction": r.prediction.hex(), "conservative": r.conservative.hex(),
                      "delays": [None if d is None else d.hex() for d in (r.mean_queueing_delay_s,
                                                                          r.mean_source_delay_s)]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
