"""Helpers shared by the figure modules: row selection, the paper's constants, verdict rules."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ._spec import Est, Verdict, est

# Section V-VI of seed 004: 500-byte packets, 100 / 50 kB/s, s = 30 ms, Delta = 200 ms
# (40 time units of 5 ms), buffer 10 packets, symmetric two-state chain.
S = 0.03           # measurement and feedback interval s, seconds
DELTA = 0.2        # round-trip propagation delay, seconds (40 time units)
DELTA_UNITS = 40   # the same in time units (5 ms packet times at the high rate)
WMAX = 128         # CHOICE: maximum TCP window, packets (the paper does not state it)


def ceil_div(delta: float, s: float = S) -> int:
    """ceil(Delta / s) with a tolerance for float noise (0.2 / 0.03 -> 7, 0.06 / 0.03 -> 2)."""
    return int(math.ceil(delta / s - 1e-9))


def n_of_k(k: int, delta: float, s: float = S) -> int:
    """``N : k Delta`` of Section VI-A: (k - 1) ceil(Delta / s) averages (at least 1)."""
    return max((k - 1) * ceil_div(delta, s), 1)


def rows(df: pd.DataFrame, **conds) -> pd.DataFrame:
    """Rows of ``df`` whose columns equal the given values (floats compared to 1e-9 relative)."""
    mask = np.ones(len(df), dtype=bool)
    for k, v in conds.items():
        if k not in df.columns:
            return df.iloc[0:0]
        col = df[k]
        if isinstance(v, float):
            mask &= np.isclose(col.astype(float), v, rtol=1e-9, atol=0.0)
        else:
            mask &= (col == v).to_numpy()
    return df[mask]


def ok(df: pd.DataFrame) -> pd.DataFrame:
    """Only the points that finished (``status == 'ok'``)."""
    return df[df["status"] == "ok"] if "status" in df.columns else df


def series(df: pd.DataFrame, x: str, value: str = "efficiency", hw: str | None = None, **conds) -> dict:
    """``{x value: Est}`` of the matching ok rows (first row per x)."""
    sub = ok(rows(df, **conds)).sort_values(x)
    out = {}
    for _, r in sub.iterrows():
        out.setdefault(float(r[x]), est(r, value, hw))
    return out


def fmt_series(name: str, s: dict, x: str = "psi", digits: int = 3, pct: bool = False) -> str:
    body = "; ".join(f"{x} {k:g}: {v.fmt(digits, pct)}" for k, v in s.items())
    return f"{name}: {body}" if body else f"{name}: (no points)"


def no_data(what: str) -> Verdict:
    return Verdict("not evaluated", f"no regenerated points for {what} (all failed or outside this size's grid)")


def sig_pos(e: Est) -> bool:
    """Significantly above zero at 95 % (the CI excludes 0)."""
    return e.lo > 0


def sig_neg(e: Est) -> bool:
    return e.hi < 0
