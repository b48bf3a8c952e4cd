"""``reproduce()``: run the sweeps of the selected figures, draw them, check the claims."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..runtime.atomic import OutputError, save_figure, write_table
from ..runtime.paths import check_output_dir
from .._validate import check_int
from ._figure_numbers import ALL_FIGURES, parse_figures
from ._report import write_report
from ._spec import SIZES, Claim, FigureSpec, Size, Verdict

__all__ = ["reproduce", "ReproduceResult", "FigureResult", "parse_figures", "ALL_FIGURES"]

@dataclass
class FigureResult:
    """One regenerated figure group: its table, files and claim verdicts."""

    spec: FigureSpec
    table: pd.DataFrame
    png: Path | None
    csv: Path
    verdicts: list = field(default_factory=list)   # [(Claim, Verdict)]
    compute_seconds: float = 0.0                     # compute time of the points computed in this run
    cached_seconds: float = 0.0                      # original compute time of the points served from the cache
    draw_error: str = ""


@dataclass
class ReproduceResult:
    """What :func:`reproduce` produced.

    Attributes
    ----------
    out : pathlib.Path
        Output folder (``figNN.png``, ``figNN.csv`` per figure group, ``REPORT.md``).
    size : Size
    seed : int
    figures : dict
        ``key -> FigureResult`` (keys like ``"fig08_09"``), in figure order.
    report : pathlib.Path
    seconds : float
        Wall-clock time of the whole reproduction.
    n_points, n_cached, n_failed : int
        Distinct sweep points, served from the cache, and failed.
    n_runs : int
        Computations behind them: points that describe the same system share one run.
    """

    out: Path
    size: Size
    seed: int
    figures: dict
    report: Path
    seconds: float
    n_points: int
    n_cached: int
    n_failed: int
    n_runs: int = 0

    def verdicts(self) -> pd.DataFrame:
        """One row per claim: figure key, paper figure, verdict status and reason."""
        rows = [{"key": k, "figure": c.figure, "status": v.status, "reason": v.reason}
                for k, fr in self.figures.items() for c, v in fr.verdicts]
        return pd.DataFrame(rows, columns=["key", "figure", "status", "reason"])


def _specs_for(nums):
    from . import SPECS

    return [s for s in SPECS if set(s.numbers) & set(nums)]


def _key(point: dict) -> str:
    return json.dumps(point, sort_keys=True, default=str)


def _system_key(method: str, point: dict) -> str:
    """What a point computes: for ``simulation`` the built :class:`~tcpabr_model.sim.Scenario`
    and the simulate options; else the point itself."""
    if method != "simulation":
        return _key(point)
    from ..sweep._methods import SIMULATION_KEYS, build_sim_scenario

    p = dict(point)
    opts = {k: p.pop(k) for k in SIMULATION_KEYS if k in p}
    try:
        sc = build_sim_scenario(p)
    except (ValueError, TypeError):     # an invalid point runs (and fails) on its own
        return _key(point)
    return _key({"scenario": sc.to_dict(), "options": opts})


def _representatives(size: Size) -> dict:
    """{point key: representative point} over the simulated points of *every* figure at
    ``size``: points that describe the same system (:func:`_system_key`, e.g. a default
    spelled out in one figure and omitted in another, or physical against normalised units)
    are represented by the one whose canonical text sorts first.  Built from all figures, not
    the selected ones, so a point's run and seed never depend on the selection."""
    from . import SPECS

    groups: dict = {}
    for spec in SPECS:
        for part in spec.parts(size):
            if part.method == "simulation":
                for p in part.grid:
                    groups.setdefault(_system_key("simulation", p), {})[_key(p)] = p
    rep = {}
    for grp in groups.values():
        first = grp[min(grp)]
        for k in grp:
            rep[k] = first
    return rep


def _run_method(method, points, *, seed, cache_dir, workers, client, progress, representatives=None):
    """Run the distinct computations of one method in one sweep; return ({point key: row
    dict}, number of runs).

    A point listed in ``representatives`` (:func:`_representatives`) runs as its
    representative, so points that say the same thing in different words share one run and
    one seed; each gets the row with its own parameters.
    """
    from ..sweep import Grid, run_sweep
    from ..sweep._methods import SIMULATION_DERIVED

    representatives = representatives or {}
    groups: dict = {}
    for p in points:
        c = representatives.get(_key(p), p)
        groups.setdefault(_key(c), (c, {}))[1][_key(p)] = p
    if not groups:
        return {}, 0
    reps = [c for c, _ in groups.values()]
    derived = SIMULATION_DERIVED if method == "simulation" else ()
    df = run_sweep(method, Grid.from_points(reps), seed=seed, cache_dir=cache_dir, workers=workers, client=client,
                   progress=progress)
    if len(df) != len(reps):
        raise RuntimeError(f"run_sweep returned {len(df)} rows for {len(reps)} points")
    out = {}
    for (rep, grp), (_, row) in zip(groups.values(), df.iterrows()):
        for k, p in grp.items():
            # the asking point's own spelling of its parameters, not the representative's; but a
            # column the method also computes (the simulation's psi of the built scenario) is the
            # same for every spelling of the system, so it stays
            r = {name: v for name, v in row.items() if name not in rep or name in p or name in derived}
            r.update(p)
            out[k] = r
    return out, len(reps)


def reproduce(figures=None, quick: bool = False, out="out/reproduce", seed: int = 0, cache_dir=None,
              workers: int | None = None, client=None, progress=None, *, size: str | None = None) -> ReproduceResult:
    """Regenerate Figs. 8-22 of seed 004 (Sections V-VII): PNG, CSV and REPORT.md.

    Parameters
    ----------
    figures : None, int, str or sequence of int, optional
        Paper figure numbers in 8..22 (``"8,9,14"`` accepted); a figure drawn together with
        others (e.g. 8 with 9) brings its whole group.  None: all.
    quick : bool, optional(default=False)
        The CI size (few psi values, 6 replications x 500 s); otherwise the full size
        (10 replications x 2000 s per simulated point).
    out : str or path, optional(default='out/reproduce')
        Output folder, created if missing.
    seed : int, optional(default=0)
        Base seed of the sweeps; each point's seed depends only on (seed, method, point).
    cache_dir : str or path, optional
        Sweep cache (a re-run with the same arguments returns from it).
    workers : int, optional
        Local worker processes (default: all cores).
    client : dask.distributed.Client, optional
        Run the points on a Dask cluster instead.
    progress : bool, optional
        tqdm progress bars (None: the sweep decides).
    size : {'tiny', 'quick', 'full'}, optional
        Overrides ``quick``; 'tiny' is a few-second size for tests only (verdicts at that
        size are not meaningful).

    Returns
    -------
    ReproduceResult

    Raises
    ------
    ValueError
        Unknown figure numbers or size, bad seed or workers.
    """
    t0 = time.perf_counter()
    nums = parse_figures(figures)
    if size is None:
        size = "quick" if quick else "full"
    if size not in SIZES:
        raise ValueError(f"size={size!r} is invalid: must be one of {tuple(SIZES)}")
    sz = SIZES[size]
    seed = check_int("seed", seed, 0, 2**63 - 1)
    if workers is not None:
        workers = check_int("workers", workers, 1, 4096)
    outp = check_output_dir(out, "out")  # before computing: a full run takes an hour
    if cache_dir is not None:
        from ..sweep._cache import resolve_cache_dir

        resolve_cache_dir(cache_dir)
    specs = _specs_for(nums)

    plan = {s.key: s.parts(sz) for s in specs}
    by_method: dict = {}
    for parts in plan.values():
        for part in parts:
            by_method.setdefault(part.method, []).extend(list(part.grid))
    # analysis first (fast, deterministic), then all simulation points in one sweep so that
    # the pool stays busy across figures
    results, runs = {}, {}
    for method in sorted(by_method, key=lambda m: (m != "analysis", m)):
        results[method], runs[method] = _run_method(
            method, by_method[method], seed=seed, cache_dir=cache_dir, workers=workers, client=client,
            progress=progress, representatives=_representatives(sz) if method == "simulation" else None)

    figs = {}
    n_cached = n_failed = 0
    counted = set()
    for spec in specs:
        frames, rows = [], []
        for part in plan[spec.key]:
            recs = []
            for p in part.grid:
                r = dict(results[part.method][_key(p)])
                r.update(part.tags)
                r["method"] = part.method
                recs.append(r)
                k = (part.method, _key(p))
                if k not in counted:
                    counted.add(k)
                    n_cached += bool(r.get("cached", False))
                    n_failed += r.get("status", "ok") != "ok"
            frames.append(pd.DataFrame(recs))
            rows += recs
        table = pd.concat(frames, ignore_index=True, sort=False)
        table = table.dropna(axis=1, how="all")
        table = _flatten(table)
        csv = outp / f"{spec.key}.csv"
        write_table(_integers(table, rows), csv)
        secs = table.get("seconds", pd.Series(0.0, index=table.index)).fillna(0.0)
        was_cached = table.get("cached", pd.Series(False, index=table.index)).fillna(False).astype(bool)
        fr = FigureResult(spec, table, None, csv, compute_seconds=float(secs[~was_cached].sum()),
                          cached_seconds=float(secs[was_cached].sum()))
        try:
            import matplotlib.pyplot as plt

            fig = spec.draw(table)
            png = outp / f"{spec.key}.png"
            try:
                save_figure(fig, png, dpi=110)
            finally:
                plt.close(fig)
            fr.png = png
        except OutputError:  # a full disk is not a drawing bug: stop, naming the file
            raise
        except Exception as exc:  # a drawing bug must not lose the numbers; reported in REPORT.md
            fr.draw_error = f"{type(exc).__name__}: {exc}"
        for claim in spec.claims:
            fr.verdicts.append((claim, _evaluate(claim, table)))
        figs[spec.key] = fr

    seconds = time.perf_counter() - t0
    n_points = sum(len(v) for v in results.values())
    res = ReproduceResult(out=outp, size=sz, seed=seed, figures=figs, report=outp / "REPORT.md", seconds=seconds,
                          n_points=n_points, n_cached=n_cached, n_failed=n_failed, n_runs=sum(runs.values()))
    write_report(res)
    return res


def _evaluate(claim: Claim, table: pd.DataFrame) -> Verdict:
    try:
        return claim.check(table)
    except Exception as exc:  # an unevaluable claim is reported, never silently dropped
        return Verdict("not supported", f"could not be evaluated ({type(exc).__name__}: {exc})")


#: counts the sweep methods return: integers even where the sweep's frame made them floats (a
#: failed point has none)
COUNT_COLUMNS = ("n_states", "nnz", "replications", "n_connections")


def _integers(df: pd.DataFrame, records: list) -> pd.DataFrame:
    """A copy of ``df`` (for the CSV) with pandas' nullable ``Int64`` (``863``, not ``863.0``; a
    missing value stays empty) in each float column of whole numbers that is a count
    (:data:`COUNT_COLUMNS`) or whose given values are all ``int`` in ``records`` (the rows before
    the concatenation, which turns an integer column with a gap into floats)."""
    import numbers

    def whole(v):
        return isinstance(v, numbers.Integral) and not isinstance(v, bool)

    out = df.copy()
    for c in df.columns:
        col = df[c]
        if col.dtype.kind != "f":
            continue
        given = [r[c] for r in records if c in r and not pd.isna(r[c])]     # scalars: the column is float
        if c not in COUNT_COLUMNS and not (given and all(whole(v) for v in given)):
            continue
        x = col.dropna()
        if ((x == x.round()) & (x.abs() < 2.0 ** 53)).all():     # exact as integers
            out[c] = col.astype("Int64")
    return out


def _flatten(df: pd.DataFrame) -> pd.DataFrame:
    """Lists/tuples in cells (per-connection parameters) as JSON text, for the CSV."""
    for c in df.columns:
        if df[c].map(lambda v: isinstance(v, (list, tuple))).any():
            df[c] = df[c].map(lambda v: json.dumps(list(v)) if isinstance(v, (list, tuple)) else v)
    return df

