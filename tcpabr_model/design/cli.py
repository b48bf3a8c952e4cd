"""``tcpabr design``: search the rate feedback for a link with the simulator (issue 26 item 3,
first part): EFFCAP's M, N, interval s and minimum rate, INSTCAP at a target utilisation,
against TCP alone, INSTCAP and the paper's EFFCAP rule; prints every candidate's throughput
and p95 delay, the Pareto front and the best design within ``--max-p95-delay``.

The link, round trip, buffer and TCP are given with the flags of ``tcpabr simulate``
(``--delta``/``--rtt``, ``--bmax``, ``--psi``, ``--rate-ratio``, ``--capacity``,
``--capacity-trace``, ``--wmax``, ``--duration``, ...); the design flags below replace
simulate's ``--m``, ``--n``, ``--interval`` and ``--mcr`` with lists to search.
"""

from __future__ import annotations

import argparse
import copy

__all__ = ["register", "handler"]

# simulate's flags that describe no link (or the feedback, which design searches)
_NOT_USED = {"preset": "--preset", "list_presets": "--list-presets", "trace": "--trace", "ci": "--ci",
             "batches": "--batches", "target_halfwidth": "--target-halfwidth", "feedback": "--feedback",
             "source_rate": "--source-rate", "k": "--k"}


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``design`` subcommand to ``subparsers``."""
    from ..sim import cli as sim_cli

    tmp = argparse.ArgumentParser(add_help=False)
    simp = sim_cli.register(tmp.add_subparsers())
    p = subparsers.add_parser("design", parents=[simp], conflict_handler="resolve",
                              help="search EFFCAP / INSTCAP feedback parameters: throughput against p95 delay",
                              description=" ".join(__doc__.split("\n\n")[0].split()))
    p.add_argument("--m", type=int, nargs="+", default=[1, 4],
                   help="EFFCAP M values to search (default 1 4)")
    p.add_argument("--n", type=int, nargs="+", default=[4, 16],
                   help="EFFCAP N values to search (default 4 16)")
    p.add_argument("--interval", type=float, nargs="+", default=None,
                   help="measurement intervals s to search, seconds (default: 0.03 only)")
    p.add_argument("--mcr", type=float, nargs="+", default=[0.0],
                   help="minimum source rates to search, fractions of the high rate (default 0)")
    p.add_argument("--utilisation", type=float, nargs="+", default=[0.9, 0.95],
                   help="INSTCAP target utilisations below 1 to search (default 0.9 0.95)")
    p.add_argument("--max-p95-delay", type=float, default=None,
                   help="p95 end-to-end delay limit of the best design, seconds (default: none)")
    p.add_argument("--replications", type=int, default=3, help="replications per candidate (default 3)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    for a in p._actions:
        if a.dest in _NOT_USED:
            a.help = argparse.SUPPRESS      # still parsed, to be refused by name
    p.set_defaults(func=handler, _defaults={a.dest: a.default for a in p._actions if a.dest != "help"})
    return p


def handler(args) -> int:
    """Run ``tcpabr design``; returns the exit status."""
    from ..cli import emit
    from ..sim.cli import _scenario
    from .search import candidate_grid, design

    for dest, flag in _NOT_USED.items():
        if getattr(args, dest, None) != args._defaults.get(dest):
            raise ValueError(f"{flag} is not used by tcpabr design (it searches the feedback itself)")
    ns = copy.copy(args)
    ns.feedback, ns.m, ns.n, ns.k, ns.mcr, ns.source_rate, ns.interval = "instcap", None, None, None, None, None, 0.03
    base = _scenario(ns)
    cands = candidate_grid(m=args.m, n=args.n, interval=tuple(args.interval) if args.interval else (None,),
                           mcr=args.mcr, utilisation=args.utilisation)
    res = design(base, cands, replications=args.replications, seed=args.seed, workers=args.workers,
                 max_p95_delay=args.max_p95_delay)
    emit(res.to_dict(), args.json, "\n".join(res.lines()))
    return 0
