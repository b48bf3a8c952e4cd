"""Run a method over a grid: per-point seeds, disk cache, process pool or Dask, tidy frame."""

from __future__ import annotations

import hashlib
import math
import numbers
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping

import numpy as np

from .._validate import check_choice, check_int
from ..errors import ModelError
from . import _cache
from ._grid import RESERVED_COLUMNS, Grid, canonical_params
from ._methods import method_name

__all__ = ["run_sweep", "point_seed", "SweepError", "SweepInterrupted"]


class SweepError(ModelError):
    """Some points of a sweep failed (raised by ``run_sweep(..., on_error="raise")``).

    Attributes
    ----------
    failures : list of (dict, str)
        Parameters and error text of each failed point, in grid order.
    frame : pandas.DataFrame
        The whole result table (failed rows have ``status == "error"``).
    """

    def __init__(self, message: str, failures=(), frame=None):
        super().__init__(message)
        self.failures = list(failures)
        self.frame = frame


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by SIGINT (or SIGTERM under :func:`tcpabr_model.runtime.pool.sigterm_as_interrupt`).

    Its message says how many points this run computed and whether they were kept in
    the cache (from which the same call resumes).  The workers have been stopped.
    """


def _package_version() -> str:
    from .. import __version__

    return __version__


def point_seed(seed: int, method_name: str, params: Mapping) -> int:
    """The seed of one sweep point, in [0, 2**63).

    It depends only on the base ``seed``, the method name and the canonical parameters
    (:func:`canonical_params`: sorted keys, ``10 == 10.0``), never on the point's position
    in the grid or on the number of workers: sha256 of ``method_name`` and the canonical
    JSON, four 32-bit words of which, after the base seed, are the entropy of a
    :class:`numpy.random.SeedSequence`; its first 64-bit state word, shifted right by
    one bit, is the point's seed.
    """
    seed = check_int("seed", seed, 0)
    if not isinstance(method_name, str):
        raise ValueError(f"method_name={method_name!r} is invalid: must be a string")
    digest = hashlib.sha256(f"{method_name}\n{canonical_params(params)}".encode("utf-8")).digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    ss = np.random.SeedSequence([seed, *words])
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))


def _run_point(func: Callable, params: dict, seed: int, options: dict):
    """Worker task: ``(ok, result_or_error_text, seconds)``; never raises for a point error."""
    t0 = time.perf_counter()
    try:
        res = func(dict(params), seed, **options)
        if not isinstance(res, Mapping):
            raise TypeError(f"method returned {type(res).__name__}, not a dict of results")
        res = dict(res)
        bad = [k for k in res if not isinstance(k, str) or k in RESERVED_COLUMNS]
        if bad:
            raise TypeError(f"method result key {bad[0]!r} is invalid: keys must be strings other than "
                            f"{', '.join(RESERVED_COLUMNS)}")
        res = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in res.items()}
        return True, res, time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - a failing point is data, not a crash
        text = f"{type(exc).__name__}: {exc}".strip()
        return False, " ".join(text.split()), time.perf_counter() - t0


def _as_grid(grid) -> Grid:
    if isinstance(grid, Grid):
        return grid
    if isinstance(grid, Mapping):
        return Grid(grid)
    if isinstance(grid, Iterable) and not isinstance(grid, (str, bytes)):
        return Grid.from_points(list(grid))
    raise ValueError(f"grid={grid!r} is invalid: must be a Grid, a dict of lists or a list of dicts")


def _same(a, b) -> bool:
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        a, b = float(a), float(b)
        return a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= 1e-9 * max(abs(a), abs(b)))
    try:
        return canonical_params({"v": a}) == canonical_params({"v": b})
    except ValueError:
        return False


def _want_progress(progress, n_pending: int, name: str) -> bool:
    if progress is None:
        if n_pending <= 1:
            return False
        tty = getattr(sys.stderr, "isatty", lambda: False)()
        return name == "simulation" or bool(tty)
    if not isinstance(progress, bool):
        raise ValueError(f"progress={progress!r} is invalid: must be True, False or None")
    return progress


def run_sweep(method, grid, *, seed: int = 0, cache_dir=None, workers: int | None = None, client=None,
              progress: bool | None = None, on_error: str = "record", method_options: Mapping | None = None):
    """Evaluate ``method`` at every point of ``grid``; one row per point, in grid order.

    Parameters
    ----------
    method : str or callable
        A name of :data:`METHODS` (``"analysis"``, ``"simulation"``,
        ``"effective_capacity"``, ``"effcap_design"``, or one added with
        :func:`register_method`) or a module-level callable
        ``f(params: dict, seed: int, **method_options) -> dict``.
    grid : Grid, dict of lists, or list of dicts
        The points (a dict is ``Grid(dict)``, a list is ``Grid.from_points(list)``).
    seed : int >= 0, optional(default=0)
        Base seed; point p runs with ``point_seed(seed, method_name, p)`` (independent of
        the grid order and of the number of workers).
    cache_dir : path, optional
        Folder of the disk cache (one file per finished point); default
        ``$TCPABR_CACHE_DIR``; neither: no cache; ``False``: no cache even with
        ``$TCPABR_CACHE_DIR`` set.  Cached points are not recomputed, so
        an interrupted sweep resumes where it stopped.
    workers : int >= 1, optional
        Local worker processes (default ``os.cpu_count()``); the sweep runs serially
        in this process for ``workers=1``, a single uncached point, or when called from
        inside a daemonic worker process (a nested sweep).  Ignored with ``client``.
    client : dask.distributed.Client, optional
        Run the points on this Dask cluster instead (``client.submit`` + ``as_completed``).
    progress : bool, optional
        tqdm progress bar, weighted by the points' expected costs, with an ETA measured after
        each worker's first point (:mod:`._progress`); default: shown when more than one point must be computed and
        the method is ``"simulation"`` or stderr is a terminal.
    on_error : {'record', 'raise'}, optional(default='record')
        A failing point always gets a row with ``status="error"`` and the exception text
        while the others finish; ``'raise'`` then raises :class:`SweepError` listing the
        failed points (the table is its ``frame`` attribute).
    method_options : dict, optional
        Keyword arguments of the method (part of the cache key).

    Returns
    -------
    pandas.DataFrame
        The point's parameters (as given), the method's result columns (NaN on failed
        rows), then ``status`` ("ok" or "error"), ``error`` (exception type and message,
        or ""), ``seed`` (the point's seed), ``seconds`` (compute time of the point, the
        original one for a cached point) and ``cached`` (bool).
    """
    import pandas as pd

    name, func = method_name(method)
    g = _as_grid(grid)
    seed = check_int("seed", seed, 0)
    check_choice("on_error", on_error, ("record", "raise"))
    if workers is not None:
        workers = check_int("workers", workers, 1, 4096)
    if method_options is None:
        method_options = {}
    if not isinstance(method_options, Mapping) or not all(isinstance(k, str) for k in method_options):
        raise ValueError(f"method_options={method_options!r} is invalid: must be a dict of keyword arguments")
    method_options = dict(method_options)
    from ._methods import check_option_values
    from ._size import check_options

    check_options(name, func, method_options)   # once, not at every point
    check_option_values(name, method_options)   # and the built-in methods' values (a bad one failed every point)
    opts_canon = canonical_params(method_options)
    cdir = _cache.resolve_cache_dir(cache_dir)
    if cdir is not None:
        _cache.remove_orphans(cdir)   # temporaries a killed run left between write and rename
    version = _package_version()

    points = g.points
    n = len(points)
    canon = [canonical_params(p) for p in points]
    seeds = [point_seed(seed, name, p) for p in points]
    keys = [_cache.cache_key(c, name, opts_canon, seed, version) for c in canon]

    # one computation per distinct point (duplicates in the grid share it)
    outcome: dict[str, tuple] = {}  # key -> (ok, result|error, seconds, cached)
    first: dict[str, int] = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    if cdir is not None:
        for k, i in first.items():
            hit = _cache.load(cdir, k)
            if hit is not None:
                outcome[k] = (True, hit[0], hit[1], True)
    pending = [i for k, i in first.items() if k not in outcome]

    def finish(i, ok, res, secs):
        k = keys[i]
        outcome[k] = (ok, res, secs, False)
        if ok and cdir is not None:
            _cache.store(cdir, k, res, secs, {"method": name, "params": canon[i], "options": opts_canon,
                                              "base_seed": seed, "point_seed": seeds[i], "version": version})

    show = _want_progress(progress, len(pending), name)
    if pending:
        from ._progress import Progress, expected_cost

        nw = workers if workers is not None else (os.cpu_count() or 1)
        nw = 1 if _in_daemon() else min(nw, len(pending))  # a sweep inside a pool worker cannot start processes
        if client is not None:
            nw = _dask_workers(client)
        bar = Progress({i: expected_cost(name, points[i], method_options) for i in pending}, f"sweep {name}",
                       disable=not show, workers=nw)
        n_before = len(outcome)
        try:
            if client is not None:
                _run_dask(client, func, points, seeds, method_options, pending, finish, bar)
            elif nw <= 1:
                for i in pending:
                    finish(i, *_run_point(func, points[i], seeds[i], method_options))
                    bar.update(i)
            else:
                _run_pool(nw, func, points, seeds, method_options, pending, finish, bar)
        except KeyboardInterrupt as exc:
            bar.close()
            computed = len(outcome) - n_before
            kept = sum(1 for k in outcome if not outcome[k][3] and outcome[k][0]) if cdir is not None else 0
            how = "terminated (SIGTERM)" if type(exc).__name__ == "Terminated" else "interrupted (SIGINT)"
            if cdir is not None:
                msg = (f"{how}: {kept} of the {len(pending)} {name} points to compute finished and are kept in the "
                       f"cache {cdir} ({n_before} were there already); the same sweep resumes from them")
            else:
                msg = (f"{how}: {computed} of the {len(pending)} {name} points finished and are lost (no cache: "
                       "give a cache folder, --cache DIR or $TCPABR_CACHE_DIR, to keep finished points)")
            raise SweepInterrupted(msg) from None
        finally:
            bar.close()

    # assemble the tidy frame ---------------------------------------------------------
    param_cols: list[str] = []
    for p in points:
        param_cols.extend(k for k in p if k not in param_cols)
    result_cols: list[str] = []
    rows = []
    failures = []
    for i, p in enumerate(points):
        ok, res, secs, cached = outcome[keys[i]]
        row = dict(p)
        if ok:
            for k, v in res.items():
                if k not in result_cols:
                    result_cols.append(k)
                # CHOICE: a result named like a parameter replaces it, unless they agree
                # (to 1e-9 relative), in which case the value as given is kept
                if k in p and _same(p[k], v):
                    continue
                row[k] = v
            err = ""
        else:
            err = res
            failures.append((dict(p), err))
        row.update(status="ok" if ok else "error", error=err, seed=seeds[i], seconds=float(secs),
                   cached=bool(cached))
        rows.append(row)
    cols = param_cols + [c for c in result_cols if c not in param_cols] + list(RESERVED_COLUMNS)
    df = pd.DataFrame(rows, columns=cols) if rows else pd.DataFrame(columns=cols)
    if rows:
        df["seed"] = df["seed"].astype("int64")
        df["cached"] = df["cached"].astype(bool)
    if failures and on_error == "raise":
        lines = "; ".join(f"{canonical_params(p)}: {e}" for p, e in failures[:10])
        more = f" (and {len(failures) - 10} more)" if len(failures) > 10 else ""
        raise SweepError(f"{len(failures)} of {n} sweep points failed ({name}): {lines}{more}",
                         failures, df)
    return df


def _dask_workers(client) -> int:
    try:
        return max(1, len(client.scheduler_info().get("workers", {})))
    except Exception:  # noqa: BLE001 - only used for the ETA's warm-up count
        return 1


def _in_daemon() -> bool:
    import multiprocessing as mp

    return bool(mp.current_process().daemon)


def _run_pool(nw, func, points, seeds, options, pending, finish, bar) -> None:
    from concurrent.futures import FIRST_COMPLETED, wait

    from ..runtime.pool import process_pool, stop_pool

    ex = process_pool(nw)  # workers end with this process, however it ends
    try:
        futs = {ex.submit(_run_point, func, points[i], seeds[i], options): i for i in pending}
        left = set(futs)
        while left:
            done, left = wait(left, return_when=FIRST_COMPLETED)
            for f in done:
                i = futs[f]
                try:
                    ok, res, secs = f.result()
                except Exception as exc:  # noqa: BLE001 - e.g. a worker killed, an unpicklable result
                    ok, res, secs = False, " ".join(f"{type(exc).__name__}: {exc}".split()), float("nan")
                finish(i, ok, res, secs)
                bar.update(i)
    except BaseException:
        stop_pool(ex)  # kill the workers: a running point would otherwise finish unseen
        raise
    ex.shutdown(wait=True)


def _run_dask(client, func, points, seeds, options, pending, finish, bar) -> None:
    try:
        from distributed import as_completed
    except ImportError:  # pragma: no cover - client given without distributed installed
        raise ValueError("client is invalid: Dask support needs dask[distributed] "
                         "(python3 -m pip install 'tcpabr-model[dask]')") from None
    if not hasattr(client, "submit"):
        raise ValueError(f"client={client!r} is invalid: must be a dask.distributed.Client")
    futs = {}
    for i in pending:
        f = client.submit(_run_point, func, points[i], seeds[i], options, pure=False,
                          key=f"tcpabr-point-{i}-{seeds[i]:x}-{os.getpid()}-{time.monotonic_ns()}")
        futs[f.key] = (i, f)
    try:
        for f in as_completed([f for _, f in futs.values()]):
            i = futs[f.key][0]
            try:
                ok, res, secs = f.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker lost, a task error on the cluster
                ok, res, secs = False, " ".join(f"{type(exc).__name__}: {exc}".split()), float("nan")
            finish(i, ok, res, secs)
            bar.update(i)
            f.release()
    except BaseException:
        client.cancel([f for _, f in futs.values()])
        raise
