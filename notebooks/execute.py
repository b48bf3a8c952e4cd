"""Re-execute the notebooks in a real Jupyter kernel and store them with their outputs.

One command refreshes every stored notebook (figures included) after the code or its
numbers change::

    python3 notebooks/execute.py                  # every notebooks/*.ipynb, small size
    python3 notebooks/execute.py tour.ipynb       # only some
    python3 notebooks/execute.py --full --no-write  # publication size, outputs not stored

Each notebook runs in a fresh ``ipykernel`` (through ``nbclient``) with its folder as the
working directory, this source tree first on ``PYTHONPATH`` and ``MPLBACKEND`` removed
from the kernel's environment, so that matplotlib uses the inline backend and every plot
cell stores its figure as a PNG, exactly as a person running the notebook in Jupyter sees
it. The stored notebooks are executed at the small size (``TCPABR_NOTEBOOK_FULL`` unset;
``--full`` sets it to 1). A notebook whose execution fails is not written; the command
then exits with status 1 after trying the others. Bad arguments exit with status 2.
Needs nbclient and ipykernel (the ``test`` extra).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent
ROOT = NOTEBOOKS.parent
SIZE_KEY = "tcpabr"  # notebook metadata key recording how the stored outputs were made


def notebook_paths(names: list[str]) -> list[Path]:
    """The notebooks to execute: ``names`` (in ``notebooks/`` or as paths), else all of them."""
    if not names:
        return sorted(NOTEBOOKS.glob("*.ipynb"))
    paths = []
    for name in names:
        path = Path(name)
        if not path.exists():
            path = NOTEBOOKS / name
        if path.suffix != ".ipynb" or not path.is_file():
            raise ValueError(f"notebook {name!r} not found (give a .ipynb file in {NOTEBOOKS})")
        paths.append(path.resolve())
    return paths


def kernel_env(full: bool) -> dict[str, str]:
    """The kernel's environment: this tree importable, no forced backend, the chosen size."""
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # ipykernel then selects the inline backend
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    if full:
        env["TCPABR_NOTEBOOK_FULL"] = "1"
    else:
        env.pop("TCPABR_NOTEBOOK_FULL", None)
    return env


def execute(path: Path, *, full: bool, timeout: int, write: bool) -> tuple[float, int]:
    """Execute one notebook; store it with its outputs when ``write``. Returns (seconds, images)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute(env=kernel_env(full))
    seconds = time.perf_counter() - start
    images = sum(1 for c in nb.cells if c.cell_type == "code"
                 for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    nb.metadata[SIZE_KEY] = {"size": "full" if full else "small", "executed_by": "notebooks/execute.py"}
    if write:
        tmp = path.with_suffix(".ipynb.tmp")
        nbformat.write(nb, tmp)
        tmp.replace(path)
    return seconds, images


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Re-execute the notebooks in a Jupyter kernel and store "
                                     "them with their outputs (small size unless --full).")
    parser.add_argument("notebooks", nargs="*", help="notebook files (default: every notebooks/*.ipynb)")
    parser.add_argument("--full", action="store_true", help="publication size (TCPABR_NOTEBOOK_FULL=1)")
    parser.add_argument("--no-write", action="store_true", help="execute only; leave the stored notebooks as they are")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds allowed per cell (default 3600)")
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        print(f"execute.py: error: --timeout must be positive, got {args.timeout}", file=sys.stderr)
        return 2
    try:
        paths = notebook_paths(args.notebooks)
    except ValueError as exc:
        print(f"execute.py: error: {exc}", file=sys.stderr)
        return 2
    from nbclient.exceptions import CellExecutionError

    failed = []
    for path in paths:
        try:
            seconds, images = execute(path, full=args.full, timeout=args.timeout, write=not args.no_write)
        except CellExecutionError as exc:
            failed.append(path.name)
            lines = [ln for ln in str(exc).splitlines() if ln.strip()]
            print(f"{path.name}: FAILED, not written: {lines[-1] if lines else exc}", flush=True)
            continue
        action = "not written" if args.no_write else "written"
        print(f"{path.name}: executed in {seconds:.0f} s, {images} figure(s), {action}", flush=True)
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
