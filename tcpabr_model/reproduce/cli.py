"""``tcpabr reproduce``: regenerate Figs. 8-22 of seed 004 with REPORT.md."""

from __future__ import annotations

import argparse

from .._validate import int_arg


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="regenerate Figs. 8-22 (PNG + CSV per figure) and REPORT.md",
                       description="Regenerate the figures of Sections V-VII of the core paper (seed 004) through "
                                   "the sweep API: figNN.png, figNN.csv and REPORT.md (each claim of the paper "
                                   "next to the regenerated numbers with 95 % CIs and a verdict).")
    p.add_argument("--quick", action="store_true", help="CI size (few psi values, 6 replications x 500 s)")
    p.add_argument("--size", choices=("tiny", "quick", "full"), default=None,
                   help="explicit size (overrides --quick; 'tiny' is a smoke test, its verdicts mean nothing)")
    p.add_argument("--figures", default=None, help="comma-separated figure numbers in 8..22 (default: all)")
    p.add_argument("--out", default="out/reproduce", help="output folder (default out/reproduce)")
    p.add_argument("--seed", type=int_arg(0, 2**63 - 1), default=0, help="base seed of the sweeps (default 0)")
    p.add_argument("--cache", default=None, metavar="DIR", help="sweep cache folder (a re-run is served from it)")
    p.add_argument("--workers", type=int_arg(1, 4096), default=None, help="local worker processes (default: all cores)")
    p.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="run on a Dask cluster: a scheduler address, or local[:N] for a local cluster")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_run, _flag_aliases={"cache_dir": "--cache"})


def _run(args: argparse.Namespace) -> int:
    from ..runtime.paths import check_output_dir
    from ..sweep.cli import check_workers_dask
    from ._figure_numbers import parse_figures

    from .._validate import check_int

    parse_figures(args.figures)  # validate before the heavy imports and before starting a cluster
    check_int("--seed", args.seed, 0, 2**63 - 1)   # these two before the output folder is made (a CLI audit)
    if args.workers is not None:
        check_int("--workers", args.workers, 1, 4096)
    check_workers_dask(args.workers, args.dask)
    check_output_dir(args.out, "--out")  # before starting a cluster or computing
    from ._run import reproduce
    import matplotlib

    matplotlib.use("Agg")
    client = cluster = None
    if args.dask:
        from ..sweep.cli import _client  # the sweep CLI's --dask parsing (address, local, local:N)

        client, cluster = _client(args.dask)
    try:
        res = reproduce(figures=args.figures, quick=args.quick, out=args.out, seed=args.seed, cache_dir=args.cache,
                        workers=args.workers, client=client, progress=False if args.no_progress else None,
                        size=args.size)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    counts = res.verdicts()["status"].value_counts().to_dict()
    for key, fr in res.figures.items():
        files = ", ".join(str(p) for p in (fr.png, fr.csv) if p is not None)
        st = ", ".join(v.status for _, v in fr.verdicts)
        print(f"{key}: {files}  [{st}]")
    sz = res.size
    print(f"{res.report}  ({sz.name} size: {sz.replications} replications x {sz.duration:g} s; seed {res.seed}; "
          f"{res.n_points} points in {res.n_runs} runs, {res.n_cached} cached, "
          f"{res.n_failed} failed; "
          f"verdicts: {', '.join(f'{n} {s}' for s, n in counts.items())}; {res.seconds:.1f} s wall clock, "
          f"{sum(fr.compute_seconds for fr in res.figures.values()):.1f} s of compute in this run)")
    return 0
