"""Wall and CPU time of one ``tcpabr design`` command in this tree and in a baseline tree,
alternated, with the JSON outputs compared (issue 26: "one design at one point in < 30 s on
2 cores"; docs/design.md "Time").

    PYTHONPATH=$PWD python benchmarks/bench_design.py --baseline /tmp/base-design --repeat 2 \\
        [--workers 1 2] [-- DESIGN ARGS ...]

Each run is a fresh ``python -m tcpabr_model design ... --json`` process (import and numba's
cache load included, as a user sees it), in this tree and in ``--baseline`` (a checkout of an
older commit, its numba cache warm: run it once first), alternated base, new, base, new.
CPU = user + system time of the process and its pool workers.  The outputs of the two trees
must be equal once the wall-clock ``seconds`` fields are removed; the script says whether.
The default command is the held-out design on the 928-s TMobile-UMTS-driving trace (two
halves of 464 s) at rtt 50 ms and 2 BDP (17 packets), the default grid, 3 replications.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT.parent / "shared" / "traces" / "TMobile-UMTS-driving.down"
DEFAULT = ["--capacity-trace", str(TRACE), "--rtt", "0.05", "--bmax", "17"]


def _strip(x):
    """``x`` without wall-clock times."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def run_once(tree: Path, args: list, workers: int) -> tuple:
    """(wall s, CPU s, parsed JSON) of one design command run in ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        subprocess.run([sys.executable, "-m", "tcpabr_model", "design", *args, "--workers", str(workers), "--json"],
                       cwd=tree, env=env, stdout=out, check=True)
        wall = time.perf_counter() - t0
        out.seek(0)
        res = json.load(out)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout of the tree to compare with")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--workers", type=int, nargs="+", default=[2])
    ap.add_argument("design_args", nargs="*", help="tcpabr design arguments (after --; default: the UMTS trace)")
    a = ap.parse_args(argv)
    args = a.design_args or DEFAULT
    print(f"tcpabr design {' '.join(args)}; load average {os.getloadavg()[0]:.2f} at start")
    print("| workers | tree | wall s | CPU s |\n|---|---|---|---|")
    ref, same = None, True
    for w in a.workers:
        for _ in range(a.repeat):
            for name, tree in (("base", a.baseline.resolve()), ("new", ROOT)):
                wall, cpu, res = run_once(tree, args, w)
                res = _strip(res)
                ref = res if ref is None else ref
                same = same and res == ref
                print(f"| {w} | {name} | {wall:.1f} | {cpu:.1f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end; outputs "
          f"{'identical' if same else 'DIFFERENT'} (wall-clock 'seconds' removed)")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
