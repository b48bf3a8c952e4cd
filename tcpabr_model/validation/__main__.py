"""``tcpabr validate`` / ``python3 -m tcpabr_model.validation``: the cross-validation report.

Prints every check (closed form, independent value, relative error, tolerance, verdict
and the basis of the tolerance) and exits 1 if any check fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The report's flags (shared by ``tcpabr validate`` and ``python3 -m tcpabr_model.validation``)."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="short simulations, about a minute (the default)")
    g.add_argument("--full", action="store_true", help="long simulations (tighter tolerances; minutes)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("-k", "--only", default=None, metavar="TEXT",
                   help="run only the checks whose function name contains TEXT")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m tcpabr_model.validation", description=__doc__)
    add_arguments(p)
    return run(p.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Run the checks selected by ``args`` and print the report; 1 if any failed, else 0."""
    from .checks import ALL_CHECKS

    quick = not args.full
    t0 = time.perf_counter()
    rows = []
    selected = [fn for fn in ALL_CHECKS if not args.only or args.only in fn.__name__]
    if not selected:
        raise ValueError(f"--only={args.only!r} is invalid: no check name contains it (checks: "
                         f"{', '.join(fn.__name__ for fn in ALL_CHECKS)})")
    for fn in ALL_CHECKS:
        if args.only and args.only not in fn.__name__:
            continue
        try:
            rows.extend(fn(quick))
        except Exception as exc:  # a crashing check is a failed check
            from ._report_row import Check

            rows.append(Check(fn.__name__, "error", float("nan"), float("nan"), float("inf"), 0.0, repr(exc)))
    elapsed = time.perf_counter() - t0
    failed = [r for r in rows if not r.passed]
    if args.json:
        print(json.dumps({
            "mode": "quick" if quick else "full",
            "elapsed_s": elapsed,
            "n_checks": len(rows),
            "n_failed": len(failed),
            "checks": [dict(r.__dict__, passed=r.passed) for r in rows],
        }, indent=2, default=float))
    else:
        hdr = f"{'check':34s} {'formula':38s} {'closed form':>14s} {'independent':>14s} {'rel.err':>9s} {'tol':>9s}  verdict"
        print(hdr)
        print("-" * len(hdr))
        for r in rows:
            print(f"{r.name[:34]:34s} {r.formula[:38]:38s} {r.closed_form:14.7g} {r.independent:14.7g} "
                  f"{r.rel_error:9.2e} {r.tolerance:9.2e}  {'PASS' if r.passed else 'FAIL'}")
        print()
        print("tolerance basis:")
        for r in rows:
            print(f"  {r.name}: {r.basis}")
        print(f"\n{len(rows) - len(failed)}/{len(rows)} checks passed in {elapsed:.1f} s ({'quick' if quick else 'full'} mode)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
