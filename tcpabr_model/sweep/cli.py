"""``tcpabr sweep``: run a method over a parameter grid (see docs/sweeps.md).

    tcpabr sweep analysis --grid psi=logspace:1:200:20 --grid bmax=10,12 --fixed delta=40 \\
        --out fig8.csv

Values are parsed as int, float, bool (true/false), null (None; ``none`` stays the string
``"none"``, as in ``feedback=none``), JSON lists (``[0.1,0.2]``) or strings.  Ranges: ``linspace:a:b:n`` (n values from a to b inclusive) and
``logspace:a:b:n`` (n values geometrically spaced from a to b inclusive, numpy's
``geomspace``; a and b are the end values, not exponents).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np

from .._validate import int_arg
from ._grid import check_grid_size


def register(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a method (analysis, simulation, effective_capacity, effcap_design, network) over a grid",
        description="Evaluate METHOD at every point of a grid (cartesian product of --grid lists plus "
                    "--fixed values, or a TOML/YAML --file); one table row per point, per-point seeds "
                    "independent of order and worker count, optional resumable disk cache.",
    )
    p.add_argument("method", metavar="METHOD",
                   help="analysis | simulation | effective_capacity | effcap_design | network | module:function")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="a grid axis; values or ranges linspace:a:b:n / logspace:a:b:n (repeatable)")
    p.add_argument("--fixed", action="append", default=[], metavar="KEY=VALUE",
                   help="a value shared by every point (repeatable)")
    p.add_argument("--file", default=None, help="grid file (.toml or .yaml): [grid] lists, [fixed] values, points; "
                   "--grid and --fixed add to its tables and override its keys of the same name")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a method option, e.g. replications=2 for simulation or solver=dense (repeatable)")
    p.add_argument("--seed", type=int_arg(0), default=0, help="base seed (>= 0)")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="disk cache folder (default $TCPABR_CACHE_DIR, and without it no cache); 'none': no cache, "
                        "even with $TCPABR_CACHE_DIR set (a folder of that name: ./none)")
    p.add_argument("--workers", type=int_arg(1, 4096), default=None, help="local worker processes (default: all cores)")
    p.add_argument("--dask", default=None, metavar="ADDRESS|local[:N]",
                   help="run on a Dask scheduler at ADDRESS, or on a local cluster of N worker processes")
    p.add_argument("--out", default=None, metavar="TABLE.csv|TABLE.parquet", help="write the table, every column (.csv, or .parquet with pyarrow)")
    p.add_argument("--json", action="store_true", help="print the table as JSON (method, counts and one record per row, every column)")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument("--yes", action="store_true",
                   help="run a sweep of more than 10,000 points or more than 1 h of estimated compute per worker "
                        "without asking (a non-interactive run refuses it otherwise)")
    p.add_argument("--columns", default=None, metavar="C1,C2,...|all",
                   help="more columns in the printed table (files always keep every column)")
    p.set_defaults(func=_run, _flag_aliases={"cache_dir": "--cache", "seed": "--seed", "workers": "--workers"})


# ---- value parsing ------------------------------------------------------------------
def parse_value(text: str):
    """``text`` as int, float, bool, None (``null``), a JSON list/dict, or the string itself."""
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":  # not "none": feedback=none is a string value
        return None
    if t[:1] in "[{":
        try:
            return json.loads(t)
        except json.JSONDecodeError as exc:
            raise ValueError(f"value {text!r} is invalid: not valid JSON ({exc.msg})") from None
    try:
        return int(t)
    except ValueError:
        pass
    try:
        v = float(t)
    except ValueError:
        return t
    return v


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _range(spec: str, key: str) -> list:
    kind, *rest = spec.split(":")
    if len(rest) != 3:
        raise ValueError(f"--grid {key}={spec!r} is invalid: a range is {kind}:START:STOP:COUNT")
    try:
        a, b = float(rest[0]), float(rest[1])
        n = int(rest[2])
    except ValueError:
        raise ValueError(f"--grid {key}={spec!r} is invalid: START and STOP must be numbers and COUNT "
                         "an integer") from None
    if n < 1 or not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"--grid {key}={spec!r} is invalid: COUNT must be >= 1 and the ends finite")
    check_grid_size(n, f"--grid {key}={spec!r}")  # before numpy allocates the values
    if kind == "logspace":
        if a <= 0 or b <= 0:
            raise ValueError(f"--grid {key}={spec!r} is invalid: logspace ends must be > 0")
        vals = np.geomspace(a, b, n)
    else:
        vals = np.linspace(a, b, n)
    return [float(v) for v in vals]


def parse_grid_arg(text: str) -> tuple[str, list]:
    """``KEY=V1,V2,...`` (values or ranges) -> (key, values)."""
    key, sep, rhs = text.partition("=")
    key = key.strip()
    if not sep or not key or not rhs.strip():
        raise ValueError(f"--grid {text!r} is invalid: must be KEY=V1,V2,... (or KEY=logspace:a:b:n)")
    vals = []
    for part in _split_top(rhs):
        part = part.strip()
        if not part:
            raise ValueError(f"--grid {text!r} is invalid: empty value")
        if part.startswith(("linspace:", "logspace:")):
            vals.extend(_range(part, key))
        else:
            vals.append(parse_value(part))
    return key, vals


def parse_fixed_arg(text: str, flag: str = "--fixed") -> tuple[str, object]:
    key, sep, rhs = text.partition("=")
    key = key.strip()
    if not sep or not key or not rhs.strip():
        raise ValueError(f"{flag} {text!r} is invalid: must be KEY=VALUE")
    return key, parse_value(rhs)


def _collect(pairs, flag) -> dict:
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"{flag} {k!r} is invalid: given twice")
        out[k] = v
    return out


def _resolve_method(text: str):
    from ._methods import METHODS

    if text in METHODS or ":" not in text:
        return text
    import importlib

    mod, _, attr = text.partition(":")
    try:
        obj = importlib.import_module(mod)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"METHOD={text!r} is invalid: cannot import it ({exc})") from None
    return obj


def check_workers_dask(workers, dask) -> None:
    """Refuse ``--workers`` together with ``--dask`` (the cluster's workers run the points)."""
    if workers is not None and dask is not None:
        raise ValueError(f"--workers={workers} is invalid with --dask: the Dask workers run the points "
                         "(use --dask local:N for N local worker processes)")


def _client(spec: str):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ValueError("--dask is invalid here: Dask support needs dask[distributed] "
                         "(python3 -m pip install 'tcpabr-model[dask]')") from None
    if spec == "local" or spec.startswith("local:"):
        n = spec.partition(":")[2]
        try:
            nw = int(n) if n else (os.cpu_count() or 1)
        except ValueError:
            raise ValueError(f"--dask {spec!r} is invalid: must be local, local:N or a scheduler address") from None
        if nw < 1:
            raise ValueError(f"--dask {spec!r} is invalid: N must be >= 1")
        from ..runtime.pool import watch_dask_workers

        cluster = LocalCluster(n_workers=nw, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        watch_dask_workers(client)  # the local workers end with this process, however it ends
        return client, cluster
    try:
        return Client(spec, timeout="20s"), None
    except (OSError, TimeoutError, ValueError) as exc:
        raise ValueError(f"--dask {spec!r} is invalid: cannot reach the scheduler ({exc})") from None


def _check_out(path: str) -> None:
    """Refuse an unwritable --out (or Parquet without pyarrow) before computing anything."""
    from ..runtime.paths import check_output_file

    check_output_file(path, "--out", (".csv", ".parquet"))
    if path.lower().endswith(".parquet"):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ValueError(f"--out {path!r} is invalid: Parquet needs pyarrow "
                             "(python3 -m pip install pyarrow), or write .csv") from None


def _check_keys(name: str, grid) -> None:
    """Refuse a grid key that the method does not take (an unknown key failed every point, after
    computing the others); each distinct set of keys checked once."""
    from ._methods import check_point_keys

    seen = set()
    for p in grid.points:
        sig = (frozenset(p), repr(p.get("normalized")))
        if sig in seen:
            continue
        seen.add(sig)
        try:
            check_point_keys(name, p)
        except ValueError as exc:   # "grid key": never read as one of sweep's own flags
            raise ValueError(f"grid key {exc}") from None


def _check_values(name: str, grid) -> None:
    """Refuse a grid whose every point the method refuses before computing (e.g. ``psi=abc``): one
    line with the first point's reason.  A grid with some valid points runs; the others are error rows."""
    from ._methods import check_point_values

    first = None
    for p in grid.points:
        try:
            check_point_values(name, p)
            return
        except (ValueError, TypeError) as exc:
            if first is None:
                first = (p, exc)
    if first is not None:
        raise ValueError(f"every point of the grid is invalid; the first, {first[0]}: {first[1]}")


def _confirmed(args, name: str, grid, options) -> bool:
    """Whether the sweep may start: below the thresholds of :mod:`._size`, ``--yes``, or a "y"
    typed at a terminal; a non-interactive run above them is refused (ValueError, exit 2)."""
    from ._size import describe, estimate_seconds, needs_confirmation

    n = len(grid.points)
    if n <= 1:
        return True
    if args.dask is not None:
        spec = args.dask
        workers = int(spec.partition(":")[2]) if spec.startswith("local:") and spec[6:].isdigit() else 1
    else:
        workers = args.workers or os.cpu_count() or 1
    seconds = estimate_seconds(name, grid.points, options)
    if not needs_confirmation(n, seconds, workers):
        return True
    what = describe(n, seconds, workers)
    if args.yes:
        print(f"tcpabr sweep: {what} (--yes)", file=sys.stderr)
        return True
    if sys.stdin.isatty() and sys.stderr.isatty():
        print(f"tcpabr sweep: {what}; above 10,000 points or 1 h. Run it? [y/N] ", end="", file=sys.stderr,
              flush=True)
        return sys.stdin.readline().strip().lower() in ("y", "yes")
    raise ValueError(f"--yes is needed: {what} is above the confirmation threshold (10,000 points or 1 h "
                     "estimated); add --yes to run it, or make the grid smaller")


def _write(df, path: str) -> None:
    from ..runtime.atomic import write_table

    write_table(df, path)


#: The main estimates shown by ``tcpabr sweep`` for each built-in method (``--columns`` adds more).
MAIN_COLUMNS = {
    "analysis": ("optimistic", "conservative"),
    "simulation": ("efficiency", "efficiency_wire", "fairness", "clr"),
    "network": ("efficiency", "fairness", "goodput_mbps", "clr"),
    "effective_capacity": ("effective_capacity",),
    "effcap_design": ("m", "n"),
}
_OTHER_METHOD_COLUMNS = 6  # result columns shown for a module:function method


def compact_table(df, grid, method: str, columns: str | None = None, options: dict | None = None) -> str:
    """The sweep table for a terminal: varying parameters, then the main estimates with 95 % CIs.

    Parameters that are the same at every point (those not shown as a column) and the
    method ``options`` are printed once above the table.  An
    estimate ``x`` with a column ``x_hw`` is shown as ``x +/- hw``.  ``columns``
    (comma-separated names, or ``all``) adds columns.
    """
    import pandas as pd

    params = [c for c in df.columns if any(c in p for p in grid.points)]
    varying = [c for c in params if df[c].astype(str).nunique() > 1]
    same = {c: df[c].iloc[0] for c in params if c not in varying}
    results = [c for c in df.columns if c not in params and c not in ("status", "error", "seed", "seconds", "cached")]
    if columns is not None:
        extra = results if columns.strip() == "all" else [c.strip() for c in columns.split(",") if c.strip()]
        unknown = [c for c in extra if c not in df.columns]
        if unknown:
            raise ValueError(f"--columns {unknown[0]!r} is invalid: the table's columns are {', '.join(df.columns)}")
    else:
        extra = []
    main = [c for c in MAIN_COLUMNS.get(method, results[:_OTHER_METHOD_COLUMNS]) if c in df.columns]
    shown = pd.DataFrame(index=df.index)
    for c in varying or params[:1]:
        shown[c] = df[c]
    for c in dict.fromkeys(main + extra):
        if c in shown or c.endswith("_hw") and c[:-3] in main + extra:
            continue
        if f"{c}_hw" in df.columns and pd.api.types.is_numeric_dtype(df[c]):
            shown[f"{c} (95% CI)"] = [_pm(v, h) for v, h in zip(df[c], df[f"{c}_hw"])]
        else:
            shown[c] = df[c]
    if (df["status"] != "ok").any():
        shown["status"] = df["status"]
    if df["cached"].any():
        shown["cached"] = df["cached"]
    fixed = {k: v for k, v in same.items() if k not in shown.columns}
    head = ("fixed: " + ", ".join(f"{k}={_fmt(v)}" for k, v in fixed.items())) if fixed else ""
    if options:
        head += ("; " if head else "") + "options: " + ", ".join(f"{k}={_fmt(v)}" for k, v in options.items())
    head += "\n" if head else ""
    return head + shown.to_string(index=False, max_rows=60, formatters={c: _fmt for c in shown.columns
                                                                         if shown[c].dtype == float})


def _fmt(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _pm(v, h) -> str:
    if v is None or v != v:
        return "nan"
    if h is None or h != h:
        return f"{v:.4f}"
    return f"{v:.4f} +/- {h:.4f}"


def _run(args: argparse.Namespace) -> int:
    from ._grid import Grid, read_grid_file
    from ._runner import run_sweep

    method = _resolve_method(args.method)
    axes = _collect((parse_grid_arg(t) for t in args.grid), "--grid")
    check_grid_size(math.prod(len(v) for v in axes.values()),
                    "--grid " + " x ".join(f"{k} ({len(v)} values)" for k, v in axes.items()))
    fixed = _collect((parse_fixed_arg(t) for t in args.fixed), "--fixed")
    options = _collect((parse_fixed_arg(t, "--option") for t in args.option), "--option")
    if args.file is not None:
        spec = read_grid_file(args.file)
        if not isinstance(spec, dict) or not all(isinstance(spec.get(t) or {}, dict) for t in ("grid", "fixed")):
            raise ValueError(f"--file {args.file!r} is invalid: must hold a [grid] and/or [fixed] table "
                             "(and optionally points)")
        spec = dict(spec)
        # CHOICE: command-line --grid / --fixed add to the file's tables and override its keys
        file_axes = dict(spec.get("grid") or {})
        file_fixed = dict(spec.get("fixed") or {})
        for k in axes:
            file_fixed.pop(k, None)
        for k in fixed:
            file_axes.pop(k, None)
        spec["grid"] = {**file_axes, **axes}
        spec["fixed"] = {**file_fixed, **fixed}
        grid = Grid.from_spec(spec, source=f"--file {args.file!r}")
    else:
        if not axes and not fixed:
            raise ValueError("--grid/--fixed/--file is invalid: give at least one to define the points")
        grid = Grid(axes, fixed)
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers={args.workers} is invalid: must be >= 1")
    check_workers_dask(args.workers, args.dask)
    from ._methods import check_option_values, method_name
    from ._size import check_options

    name, func = method_name(method)
    check_options(name, func, options, "--option")   # once, before any point (it failed at every point)
    check_option_values(name, options, "--option")   # and their values, the same way
    _check_keys(name, grid)
    _check_values(name, grid)
    if args.out:
        _check_out(args.out)
    if not _confirmed(args, name, grid, options):
        print("tcpabr sweep: not started", file=sys.stderr)
        return 1
    client = cluster = None
    if args.dask is not None:
        client, cluster = _client(args.dask)
    try:
        cache = False if (args.cache or "").lower() == "none" else args.cache   # 'none': no cache at all
        df = run_sweep(method, grid, seed=args.seed, cache_dir=cache, workers=args.workers,
                       client=client, progress=False if args.no_progress else None, method_options=options)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    if args.out:
        _write(df, args.out)   # an OSError: one line naming the file, exit 1 (tcpabr_model.cli)
    nerr = int((df["status"] == "error").sum())
    cached = int(df["cached"].sum())
    this_run = float(df.loc[~df["cached"], "seconds"].fillna(0).sum())
    if args.json:
        from ..cli import emit

        emit({"method": method if isinstance(method, str) else args.method, "points": len(df), "cached": cached,
              "failed": nerr, "seconds_this_run": this_run, "rows": df.to_dict(orient="records")}, True, "")
        if args.out:
            print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(compact_table(df, grid, args.method, args.columns, options))
        print(f"\n{len(df)} points ({cached} from the cache, {nerr} failed), {this_run:.2f} s of compute in this run"
              f", base seed {args.seed}" + (f"; wrote {args.out} (every column)" if args.out else ""))
    if nerr:
        bad = [i for i, s in enumerate(df["status"]) if s == "error"]
        for i in bad[:5]:
            print(f"tcpabr sweep: point failed: {grid[i]}: {df['error'].iloc[i]}", file=sys.stderr)
        if len(bad) > 5:
            print(f"tcpabr sweep: ... {len(bad) - 5} more failed points", file=sys.stderr)
        return 1
    return 0
