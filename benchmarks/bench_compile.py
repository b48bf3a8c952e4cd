"""The analysis' numba compile on a cold cache: ten analyses, each with another option of the chain
build (docs/model.md sec. 5a item 15), timed in a fresh process whose ``NUMBA_CACHE_DIR`` is an
empty folder, so that every kernel compiles there.

    PYTHONPATH=TREE python benchmarks/bench_compile.py

Prints one JSON line: the tree the package was imported from, the seconds of each analysis (the
first compiles every kernel it uses; a later one only what an option adds) and their total. Run it
once per tree; nothing else should run beside it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import json, sys, time
from pathlib import Path
import tcpabr_model
from tcpabr_model.capacity import read_trace
from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.trace_study import analyze_link, fit_link

data = Path(sys.argv[1])
paper = dict(delta=20, bmax=10, wmax=48)
cases = [("paper INSTCAP", lambda: analyze(Scenario(**paper))),
         ("paper TCP alone", lambda: analyze(Scenario(**paper, feedback="none"))),
         ("paper TCP alone, timer cycle", lambda: analyze(Scenario(**paper, feedback="none", loss_cycle="timer"))),
         ("paper INSTCAP, sack", lambda: analyze(Scenario(**paper, tcp="sack"))),
         ("paper TCP alone, counter", lambda: analyze(Scenario(**paper, feedback="none", ca_increment="counter"))),
         ("paper TCP alone, spread ACKs", lambda: analyze(Scenario(**paper, feedback="none", ack_clock="spread")))]
for name in ("markov3_outage.down", "constant_1000pps.down"):
    link = fit_link(read_trace(data / name), 0.1, patterns=2)
    cases += [(f"{name} {fb}", (lambda link=link, fb=fb: analyze_link(link, 2, fb))) for fb in ("none", "instcap")]
out = {"tree": str(Path(tcpabr_model.__file__).parents[1]), "seconds": {}}
for name, run in cases:
    t = time.perf_counter()
    run()
    out["seconds"][name] = round(time.perf_counter() - t, 2)
out["total"] = round(sum(out["seconds"].values()), 1)
print(json.dumps(out))
"""


def main() -> int:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        got = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "tests" / "data")], env=env, cwd=cache,
                             capture_output=True, text=True)     # cwd: not the tree this script is in
    if got.returncode != 0:
        sys.stderr.write(got.stderr)
        return got.returncode
    print(got.stdout.strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
