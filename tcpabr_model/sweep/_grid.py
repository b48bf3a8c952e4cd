"""Parameter grids of a sweep and their canonical form.

A :class:`Grid` is an ordered list of parameter dicts (one per point).  It is built as
the cartesian product of lists (``Grid({"psi": [1, 10], "bmax": [10, 12]})``), from an
explicit list of points (:meth:`Grid.from_points`) or from a TOML / YAML file
(:meth:`Grid.from_file`).  :func:`canonical_params` is the sorted-key JSON text that
identifies a point for its seed and its cache entry (10 and 10.0 are the same point).
"""

from __future__ import annotations

import itertools
import json
import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

__all__ = ["Grid", "canonical_params", "RESERVED_COLUMNS", "MAX_POINTS", "check_grid_size"]

#: Most points a sweep may have.  CHOICE: a million points (about 1 GiB of grid, cache
#: keys and result rows at the ~1 KiB per point measured for a few parameters and result
#: columns) is far beyond any study of this model and refuses a typo like COUNT=1e9 before
#: anything is allocated.
MAX_POINTS = 1_000_000
_BYTES_PER_POINT = 1024

#: Columns every sweep row gets; a point may not use these names as parameters.
RESERVED_COLUMNS = ("status", "error", "seed", "seconds", "cached")


def _plain(value, name: str):
    """``value`` with numpy scalars/arrays and tuples turned into plain Python values."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return [_plain(v, name) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(v, name) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v, f"{name}.{k}") for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ValueError(f"{name}={value!r} is invalid: parameter values must be numbers, strings, "
                     "booleans, None, or lists/dicts of those")


def _canon(value):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v.is_integer() and abs(v) < 2**53:
            return int(v)
        return v
    if isinstance(value, np.ndarray):
        return [_canon(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_canon(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _canon(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return _canon(value.item())
    raise ValueError(f"value {value!r} is invalid: parameter values must be numbers, strings, "
                     "booleans, None, or lists/dicts of those")


def canonical_params(params: Mapping) -> str:
    """Canonical JSON text of a parameter dict (or any JSON-like value).

    Keys are sorted; integral floats are written as integers (so ``10`` and ``10.0`` are
    the same point); tuples and numpy arrays become lists; numpy scalars become Python
    numbers; NaN and infinities become the strings ``"nan"``, ``"inf"``, ``"-inf"``.
    Non-integral floats keep their shortest round-trip representation (``repr``), so two
    points are the same only if their floats are bit-identical.
    """
    return json.dumps(_canon(params), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def check_grid_size(n: int, what: str) -> int:
    """``n`` if a sweep of ``n`` points is allowed, else ``ValueError`` with the estimate and the limit."""
    if n > MAX_POINTS:
        gib = n * _BYTES_PER_POINT / 2**30
        raise ValueError(f"{what} is invalid: {n:,} points (about {gib:,.1f} GiB at ~1 KiB per point) "
                         f"exceed the limit of {MAX_POINTS:,} points per sweep")
    return n


def _check_point(point, where: str) -> dict:
    if not isinstance(point, Mapping):
        raise ValueError(f"{where}={point!r} is invalid: a point must be a dict of parameter values")
    out = {}
    for k, v in point.items():
        if not isinstance(k, str) or not k:
            raise ValueError(f"{where} key {k!r} is invalid: parameter names must be non-empty strings")
        if k in RESERVED_COLUMNS:
            raise ValueError(f"{where} key {k!r} is invalid: {', '.join(RESERVED_COLUMNS)} are "
                             "reserved sweep columns (the per-point seed comes from run_sweep's seed)")
        out[k] = _plain(v, k)
    return out


class Grid:
    """An ordered list of sweep points (parameter dicts).

    Parameters
    ----------
    axes : mapping of str to sequence, optional
        Parameter name -> list of values.  The grid is their cartesian product, the first
        key varying slowest (``itertools.product`` order).  A numpy array is accepted as
        a list.
    fixed : mapping of str to value, optional
        Values added to every point (after the axes, in this order).

    Notes
    -----
    ``len(grid)``, ``iter(grid)`` (fresh dict copies, deterministic order),
    ``grid[i]`` and ``grid1 + grid2`` (the points of ``grid1`` then those of ``grid2``
    not already in ``grid1``; CHOICE: the union keeps first occurrences and drops
    duplicates by canonical form, see :func:`canonical_params`).
    """

    __slots__ = ("_points",)

    def __init__(self, axes: Mapping[str, Sequence] | None = None, fixed: Mapping | None = None):
        axes = {} if axes is None else axes
        fixed = {} if fixed is None else fixed
        if not isinstance(axes, Mapping):
            raise ValueError(f"axes={axes!r} is invalid: must be a dict of parameter name -> list of values")
        if not isinstance(fixed, Mapping):
            raise ValueError(f"fixed={fixed!r} is invalid: must be a dict of parameter name -> value")
        lists = {}
        for k, vals in axes.items():
            if isinstance(vals, (str, bytes, Mapping)) or not isinstance(vals, (Sequence, np.ndarray)):
                raise ValueError(f"axes[{k!r}]={vals!r} is invalid: must be a list of values "
                                 "(put single values in fixed=)")
            vals = list(vals.tolist() if isinstance(vals, np.ndarray) else vals)
            if not vals:
                raise ValueError(f"axes[{k!r}]=[] is invalid: must have at least one value")
            lists[k] = vals
        both = sorted(set(lists) & set(fixed))
        if both:
            raise ValueError(f"fixed key {both[0]!r} is invalid: it is also a grid axis")
        fixed = _check_point(fixed, "fixed")
        keys = list(lists)
        check_grid_size(math.prod(len(v) for v in lists.values()),
                        "axes (" + " x ".join(f"{len(v)} {k}" for k, v in lists.items()) + ")")
        points = []
        for combo in itertools.product(*(lists[k] for k in keys)):
            p = dict(zip(keys, combo))
            p.update(fixed)
            points.append(_check_point(p, "grid point"))
        if not keys and not fixed:
            points = []
        self._points = points

    # ---- constructors ---------------------------------------------------------------
    @classmethod
    def from_points(cls, points: Iterable[Mapping]) -> "Grid":
        """A grid of explicit points, in the given order (duplicates kept)."""
        if isinstance(points, (Mapping, str, bytes)):
            raise ValueError(f"points={points!r} is invalid: must be a list of dicts")
        g = cls()
        g._points = [_check_point(p, f"points[{i}]") for i, p in enumerate(points)]
        return g

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "Grid":
        """Read a grid from a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file.

        The file has a ``[grid]`` table of lists (the cartesian axes) and a ``[fixed]``
        table of single values, and optionally ``points``, a list of tables (explicit
        points).  With both ``points`` and ``grid``, every explicit point is combined with
        every grid combination; ``fixed`` is added to all.  Example::

            [fixed]
            delta = 40
            feedback = "instcap"

            [grid]
            psi = [1, 10, 100]
            bmax = [10, 12]
        """
        return cls.from_spec(read_grid_file(path), source=str(path))

    @classmethod
    def from_spec(cls, spec: Mapping, source: str = "spec") -> "Grid":
        """A grid from a dict with keys ``grid``, ``fixed`` and ``points`` (all optional)."""
        if not isinstance(spec, Mapping):
            raise ValueError(f"{source} is invalid: must be a table with [grid], [fixed] and/or points")
        unknown = sorted(set(spec) - {"grid", "fixed", "points"})
        if unknown:
            raise ValueError(f"{source} key {unknown[0]!r} is invalid: allowed top-level keys are "
                             "'grid', 'fixed', 'points'")
        axes = spec.get("grid") or {}
        fixed = spec.get("fixed") or {}
        points = spec.get("points")
        if points is None:
            if not axes and not fixed:
                raise ValueError(f"{source} is invalid: it defines no points (no [grid], [fixed] or points)")
            return cls(axes, fixed)
        if not isinstance(points, Sequence) or isinstance(points, (str, bytes)):
            raise ValueError(f"{source} points={points!r} is invalid: must be a list of tables")
        base = cls.from_points(points)
        combos = list(cls(axes)) if axes else [{}]
        check_grid_size(len(base) * len(combos), f"{source} ({len(base)} points x {len(combos)} grid combinations)")
        out = []
        for p in base:
            for q in combos:
                clash = sorted((set(p) & set(q)) | (set(p) & set(fixed)) | (set(q) & set(fixed)))
                if clash:
                    raise ValueError(f"{source} key {clash[0]!r} is invalid: given both in points and "
                                     "in [grid]/[fixed]")
                out.append({**p, **q, **fixed})
        return cls.from_points(out)

    # ---- container protocol ---------------------------------------------------------
    @property
    def points(self) -> list[dict]:
        """The points as a list of fresh dicts."""
        return [dict(p) for p in self._points]

    def __len__(self) -> int:
        return len(self._points)

    def __iter__(self):
        return iter(self.points)

    def __getitem__(self, i: int) -> dict:
        return dict(self._points[i])

    def __add__(self, other) -> "Grid":
        if not isinstance(other, Grid):
            return NotImplemented
        seen = set()
        out = []
        for p in self._points + other._points:
            key = canonical_params(p)
            if key not in seen:
                seen.add(key)
                out.append(p)
        return Grid.from_points(out)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Grid):
            return NotImplemented
        return [canonical_params(p) for p in self._points] == [canonical_params(p) for p in other._points]

    __hash__ = None

    def __repr__(self) -> str:
        keys = []
        for p in self._points:
            keys.extend(k for k in p if k not in keys)
        return f"Grid({len(self)} points; parameters: {', '.join(keys) or '-'})"


def read_grid_file(path: str | os.PathLike) -> dict:
    """Parse a TOML or YAML grid file into a dict (no validation beyond the syntax)."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".toml", ".yaml", ".yml"):
        raise ValueError(f"grid file={path!r} is invalid: must end in .toml, .yaml or .yml")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ValueError(f"grid file={path!r} is invalid: {exc.strerror or exc}") from None
    if ext == ".toml":
        import tomllib

        try:
            return tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"grid file={path!r} is invalid: {exc}") from None
    try:
        import yaml
    except ImportError:  # pragma: no cover - depends on the environment
        raise ValueError(f"grid file={path!r} is invalid: YAML needs PyYAML "
                         "(python3 -m pip install pyyaml) or use TOML") from None
    try:
        spec = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise ValueError(f"grid file={path!r} is invalid: {' '.join(str(exc).split())}") from None
    return {} if spec is None else spec
