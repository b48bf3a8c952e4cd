"""``to_dict()`` / ``to_frame()`` for result objects (a mixin), and a frame of many results.

A result's :meth:`~ResultMixin.to_dict` is its JSON-ready nested dict (classes that
define their own keep it); :meth:`~ResultMixin.to_flat_dict` flattens it into one
level, joining keys with ``_`` (``efficiency`` -> ``efficiency_mean``,
``efficiency_half_width``; list items by position: ``goodput_bps_0_mean``), and
:meth:`~ResultMixin.to_frame` is that row as a one-row :class:`pandas.DataFrame`.
:func:`results_frame` stacks many results (e.g. one per psi) into one table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

__all__ = ["ResultMixin", "flatten", "results_frame"]


def flatten(d: Mapping, prefix: str = "") -> dict:
    """One-level dict of a nested dict/list structure; keys joined with ``_``."""
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "_"))
        elif isinstance(v, (list, tuple)) and any(isinstance(x, (Mapping, list, tuple)) for x in v):
            out.update(flatten({str(i): x for i, x in enumerate(v)}, key + "_"))
        else:
            out[key] = list(v) if isinstance(v, tuple) else v
    return out


class ResultMixin:
    """Adds :meth:`to_dict` (if the class has none), :meth:`to_flat_dict` and :meth:`to_frame`."""

    def to_dict(self) -> dict:
        """JSON-ready nested dict of the result's fields (dataclasses)."""
        return dataclasses.asdict(self)

    def to_flat_dict(self) -> dict:
        """:meth:`to_dict` flattened into one level (keys joined with ``_``)."""
        return flatten(self.to_dict())

    def to_frame(self):
        """The result as a one-row :class:`pandas.DataFrame` (columns of :meth:`to_flat_dict`)."""
        import pandas as pd

        return pd.DataFrame([self.to_flat_dict()])


def results_frame(results: Iterable) -> "pandas.DataFrame":  # noqa: F821 - pandas imported lazily
    """One row per result (objects with ``to_flat_dict()``), columns in order of first appearance."""
    import pandas as pd

    rows = []
    for i, r in enumerate(results):
        if not hasattr(r, "to_flat_dict"):
            raise ValueError(f"results[{i}]={type(r).__name__} is invalid: must be a result object with to_flat_dict()")
        rows.append(r.to_flat_dict())
    return pd.DataFrame(rows)
