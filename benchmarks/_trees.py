"""Other checkouts of the package timed in the same run (a benchmark's ``--baseline DIR``, for
example ``git worktree add /tmp/old <commit>``): each tree measured in a fresh process with
``PYTHONPATH`` set to it, running the benchmark script's own hidden ``--child`` mode, which prints
its rows as one JSON line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def named_trees(baselines: list[Path], here: Path) -> list[tuple[str, Path]]:
    """``[(name, folder)]``: the baselines ("baseline", or "baseline 1", "baseline 2", ...),
    then this tree."""
    return [(f"baseline {i + 1}" if len(baselines) > 1 else "baseline", b.resolve())
            for i, b in enumerate(baselines)] + [("this tree", here)]


def run_child(script: str, tree: Path, child_args: list[str]) -> list[dict]:
    """The rows that ``script --child child_args`` prints when it imports the package from
    ``tree``; a failing process ends the benchmark with its error."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    res = subprocess.run([sys.executable, str(Path(script).resolve()), "--child", *child_args], env=env,
                         cwd=str(tree), capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{tree}: the measuring process failed (exit {res.returncode}):\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])
