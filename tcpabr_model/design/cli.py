"""``tcpabr design``: search the rate feedback for a link with the simulator (issue 26 items
3-4): EFFCAP's M, N, interval s and minimum rate, INSTCAP at a target utilisation, against
TCP alone, INSTCAP and the paper's EFFCAP rule; prints every candidate's throughput and p95
delay, the Pareto front and the best design within ``--max-p95-delay``, with the Markov
analysis beside TCP alone and INSTCAP.

The link, round trip, buffer and TCP are given with the flags of ``tcpabr simulate``
(``--delta``/``--rtt``, ``--bmax``, ``--psi``, ``--rate-ratio``, ``--capacity``,
``--capacity-trace``, ``--wmax``, ``--duration``, ...); the design flags below replace
simulate's ``--m``, ``--n``, ``--interval`` and ``--mcr`` with lists to search.  A trace is
designed held out (on each half, reported on the other; ``--whole-trace`` for all of it);
several ``--psi`` give the max-min design over psi (docs/design.md).
"""

from __future__ import annotations

import argparse
import copy

from .._validate import int_arg

__all__ = ["register", "handler"]

# simulate's flags that describe no link (or the feedback, which design searches)
_NOT_USED = {"preset": "--preset", "list_presets": "--list-presets", "trace": "--trace", "ci": "--ci",
             "batches": "--batches", "target_halfwidth": "--target-halfwidth", "feedback": "--feedback",
             "source_rate": "--source-rate", "k": "--k"}
# flags of the simulation that --analysis-only would ignore
_SIMULATION_ONLY = {"replications": "--replications", "workers": "--workers", "seed": "--seed",
                    "max_p95_delay": "--max-p95-delay"}


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``design`` subcommand to ``subparsers``."""
    from ..sim import cli as sim_cli

    tmp = argparse.ArgumentParser(add_help=False)
    simp = sim_cli.register(tmp.add_subparsers())
    p = subparsers.add_parser("design", parents=[simp], conflict_handler="resolve",
                              help="search EFFCAP / INSTCAP feedback parameters: throughput against p95 delay",
                              description=" ".join(__doc__.split("\n\n")[0].split()))
    p.add_argument("--m", type=int_arg(1, 10_000), nargs="+", default=[1, 4],
                   help="EFFCAP M values to search (default 1 4)")
    p.add_argument("--n", type=int_arg(1, 10_000), nargs="+", default=[4, 16],
                   help="EFFCAP N values to search (default 4 16)")
    p.add_argument("--interval", type=float, nargs="+", default=None,
                   help="measurement intervals s to search, seconds (default: 0.03 only)")
    p.add_argument("--mcr", type=float, nargs="+", default=[0.0],
                   help="minimum source rates to search, fractions of the high rate (default 0)")
    p.add_argument("--utilisation", type=float, nargs="+", default=[0.9, 0.95],
                   help="INSTCAP target utilisations to search, each in (0, 1] (1 at the base interval and mcr 0 "
                        "is INSTCAP itself, always evaluated as a reference; default 0.9 0.95)")
    p.add_argument("--duration", type=float, default=None,
                   help="measured simulated time per replication, seconds (default 2000, 500 with --quick; with "
                        "--capacity-trace the trace's period, held out each half's)")
    p.add_argument("--max-p95-delay", type=float, default=None,
                   help="p95 end-to-end delay limit of the best design, seconds (default: none)")
    p.add_argument("--replications", type=int_arg(1, 100_000), default=None,
                   help="replications per candidate (default 3; 2 with --quick)")
    p.add_argument("--psi", type=_floats, nargs="+", default=[[20.0]],
                   help="mean time per capacity state / max(delta) of the two-state link; several (1,10,100 or "
                        "1 10 100): the robust design, best worst-case throughput within the p95 limit at every "
                        "psi (default 20)")
    p.add_argument("--whole-trace", action="store_true",
                   help="with --capacity-trace: design on the whole trace (default: held out, design on each "
                        "half and report on the other)")
    p.add_argument("--no-analysis", action="store_true",
                   help="do not report the Markov analysis beside TCP alone, INSTCAP and EFFCAP measured every "
                        "round trip")
    p.add_argument("--analysis-only", action="store_true",
                   help="evaluate only TCP alone, INSTCAP and EFFCAP measured every round trip (--interval equal to "
                        "the RTT; docs/model.md sec. 20), with the Markov analysis (seconds; throughput and mean "
                        "delay, no p95 and no front)")
    p.add_argument("--quick", action="store_true",
                   help="a smaller search: M 1 4, N 4 16, utilisation 0.9, 2 replications, 500 s per replication "
                        "on the two-state link (a trace: its half, as without --quick)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    for a in p._actions:
        if a.dest in _NOT_USED:
            a.help = argparse.SUPPRESS      # still parsed, to be refused by name
    p.set_defaults(func=handler, _defaults={a.dest: a.default for a in p._actions if a.dest != "help"})
    return p


def _floats(text: str) -> list:
    """``'1,10,100'`` -> [1.0, 10.0, 100.0] (``--psi`` takes commas or spaces)."""
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number or a comma-separated list of numbers") from None


def _given(args, dest) -> bool:
    return getattr(args, dest, None) != args._defaults.get(dest)


def handler(args) -> int:
    """Run ``tcpabr design``; returns the exit status."""
    from ..cli import emit
    from ..sim.cli import _refuse_ignored, _scenario
    from .robust import design_held_out, design_over_psi
    from .search import FEEDBACKS, candidate_grid, design

    for dest, flag in _NOT_USED.items():
        if _given(args, dest):
            raise ValueError(f"{flag} is not used by tcpabr design (it searches the feedback itself)")
    psis = [x for group in args.psi for x in group]
    trace = args.capacity_trace is not None
    if args.whole_trace and not trace:
        raise ValueError("--whole-trace is invalid without --capacity-trace")
    if trace and not args.whole_trace and args.capacity_offset is not None:
        raise ValueError("--capacity-offset is invalid with a held-out design (each replication replays a half from "
                         "a random start): add --whole-trace or drop it")
    if len(psis) > 1 and (trace or args.capacity is not None):
        raise ValueError(f"--psi {','.join(f'{x:g}' for x in psis)} is invalid with a trace or a capacity model: "
                         "several psi are the two-state link's robust design")
    _refuse_ignored(args, FEEDBACKS)     # simulate's rules, for TCP alone and the ABR candidates
    if args.analysis_only:
        bad = [f for d, f in _SIMULATION_ONLY.items() if _given(args, d)]
        if bad:
            raise ValueError(f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} ignored with --analysis-only "
                             f"(nothing is simulated): drop {'it' if len(bad) == 1 else 'them'}")
    # the search values the user gave (before --quick sets its grid): with --analysis-only, one the
    # analysis cannot evaluate is refused, as --max-p95-delay is
    grid_given = {f"--{d}": getattr(args, d) for d in ("mcr", "utilisation", "interval", "m", "n") if _given(args, d)}
    if args.quick:
        for dest in ("m", "n", "utilisation"):
            if _given(args, dest):
                raise ValueError(f"--{dest} is invalid with --quick (it fixes the grid): drop one of them")
        args.m, args.n, args.utilisation = [1, 4], [4, 16], [0.9]
    reps = args.replications if args.replications is not None else (2 if args.quick else 3)
    ns = copy.copy(args)
    ns.feedback, ns.m, ns.n, ns.k, ns.mcr, ns.source_rate, ns.interval = "instcap", None, None, None, None, None, 0.03
    ns.psi = psis[0]
    if args.duration is None and args.quick and not trace:
        ns.duration = 500.0
    cands = candidate_grid(m=args.m, n=args.n, interval=tuple(args.interval) if args.interval else (None,),
                           mcr=args.mcr, utilisation=args.utilisation)
    kw = {"replications": reps, "seed": args.seed, "workers": args.workers, "max_p95_delay": args.max_p95_delay,
          "analysis": not args.no_analysis}
    if args.analysis_only:
        if args.no_analysis or len(psis) > 1 or (trace and not args.whole_trace):
            raise ValueError("--analysis-only is invalid with --no-analysis, several --psi or a held-out trace "
                             "(add --whole-trace)")
        from .analysis import analysis_only, analysis_only_lines, analysis_only_refusal

        base = _trace_base(ns, args) if trace else _scenario(ns)
        why = analysis_only_refusal(base, cands, grid_given)
        if why is not None:
            raise ValueError(why)
        res = analysis_only(base, cands)
        emit(res, args.json, "\n".join(analysis_only_lines(res)))
        return 0
    if trace:
        base = _trace_base(ns, args)
        if args.whole_trace:
            res = design(base, cands, **kw)
        else:
            res = design_held_out(base, cands, duration=args.duration, **kw)
    elif len(psis) > 1:
        bases = []
        for x in psis:
            ns_x = copy.copy(ns)
            ns_x.psi = x
            bases.append(_scenario(ns_x))
        res = design_over_psi(bases, psis, cands, **kw)
    else:
        res = design(_scenario(ns), cands, **kw)
    emit(res.to_dict(), args.json, "\n".join(res.lines()))
    return 0


def _trace_base(ns, args):
    """The scenario of a trace: simulate's, measured over the trace's period unless --duration
    (the held-out design replaces it by each half's period)."""
    from ..sim.cli import _scenario

    if args.duration is None:
        from ..capacity import read_trace

        ns.duration = read_trace(args.capacity_trace).period_ms / 1000.0
    return _scenario(ns)
