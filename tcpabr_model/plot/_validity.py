"""Heat map of the analysis-vs-simulation gap (:func:`tcpabr_model.validity.validity_map`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["plot_gap_heatmap"]

_LABELS = {"psi": "psi = tau / Delta", "bmax": "B_max (packets)", "delta": "Delta (time units)",
           "wmax": "W_max (packets)", "rate_ratio": "low / high rate"}


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return f"{v:g}" if isinstance(v, (float, np.floating)) else str(v)


def plot_gap_heatmap(df: pd.DataFrame, *, x: str = "psi", y: str | Sequence[str] = ("delta", "bmax", "wmax"),
                     value: str = "gap", ax=None, vmax: float | None = None, annotate: bool = True,
                     title: str | None = None, cmap: str = "RdBu"):
    """Heat map of the signed relative gap, one panel per (feedback, mode).

    Rows are the combinations of the ``y`` columns, columns the values of ``x``; a cell
    holds the mean of ``value`` over the rows of ``df`` that fall in it (normally one).
    Colour: diverging around 0 (red: simulation below the conservative bound, blue: above
    the optimistic bound, white: inside); the number printed is the gap in percent of the
    band's midpoint.  Failed points (NaN) are grey.

    Parameters
    ----------
    df : pandas.DataFrame
        A :func:`~tcpabr_model.validity.validity_map` table (needs ``x``, the ``y``
        columns and ``value``; ``feedback`` and ``mode`` split it into panels).
    x : str, optional(default='psi')
    y : str or sequence of str, optional(default=('delta', 'bmax', 'wmax'))
    value : str, optional(default='gap')
        ``'gap'`` (CI-aware) or ``'gap_point'``.
    ax : matplotlib Axes, optional
        Draw into it; only allowed when ``df`` holds a single (feedback, mode).
    vmax : float, optional
        Colour scale limit (relative gap); default the largest |value|, at least 0.01.
    annotate : bool, optional(default=True)
        Print each cell's value in percent.
    title : str, optional
    cmap : str, optional(default='RdBu')

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df={type(df).__name__} is invalid: must be a pandas DataFrame")
    ys = [y] if isinstance(y, str) else list(y)
    ys = [c for c in ys if c in df.columns and df[c].nunique(dropna=False) > 0]
    need = [x, value] + ys
    miss = [c for c in need if c not in df.columns]
    if miss:
        raise ValueError(f"df is invalid: missing columns {miss} (needs x={x!r}, y={ys!r}, value={value!r})")
    if len(df) == 0:
        raise ValueError("df is invalid: it has no rows")
    keys = [k for k in ("feedback", "mode") if k in df.columns]
    groups = list(df.groupby(keys, sort=True)) if keys else [((), df)]
    if ax is not None and len(groups) > 1:
        raise ValueError(f"ax is invalid with {len(groups)} (feedback, mode) panels: pass one panel's rows or no ax")
    vals = df[value].to_numpy(float)
    finite = vals[np.isfinite(vals)]
    if vmax is None:
        vmax = max(float(np.max(np.abs(finite))) if finite.size else 0.0, 0.01)
    elif not (np.isfinite(vmax) and vmax > 0):
        raise ValueError(f"vmax={vmax!r} is invalid: must be a positive finite number")
    xs = sorted(df[x].dropna().unique())
    if ax is None:
        n = len(groups)
        ncol = min(n, 2)
        nrow = -(-n // ncol)
        ny = max(1, df.groupby(ys).ngroups if ys else 1)
        fig, axes = plt.subplots(nrow, ncol, figsize=(1.0 + 0.75 * len(xs) * ncol + 1.5, 1.0 + 0.32 * ny * nrow + 0.8),
                                 squeeze=False, constrained_layout=True)
        axes = axes.ravel()
        for extra in axes[n:]:
            extra.set_visible(False)
    else:
        fig = ax.figure
        axes = [ax]
    im = None
    for a, (key, sub) in zip(axes, groups):
        if ys:
            pt = sub.pivot_table(index=ys, columns=x, values=value, aggfunc="mean", dropna=False)
        else:
            pt = sub.groupby(x)[value].mean().to_frame().T
        pt = pt.reindex(columns=xs)
        z = pt.to_numpy(float)
        cm = plt.get_cmap(cmap).with_extremes(bad="0.8")
        im = a.imshow(np.ma.masked_invalid(z), cmap=cm, vmin=-vmax, vmax=vmax, aspect="auto",
                      interpolation="nearest")
        a.set_xticks(range(len(xs)), [_fmt(v) for v in xs])
        if ys:
            rows = pt.index.to_list()
            rows = [r if isinstance(r, tuple) else (r,) for r in rows]
            a.set_yticks(range(len(rows)), [", ".join(f"{c}={_fmt(v)}" for c, v in zip(ys, r)) for r in rows],
                       fontsize=7)
        else:
            a.set_yticks([])
        a.set_xlabel(_LABELS.get(x, x))
        key = key if isinstance(key, tuple) else (key,)
        label = dict(zip(keys, key))
        fb = label.get("feedback")
        fbname = {"instcap": "TCP over INSTCAP ABR", "none": "TCP alone"}.get(fb, fb)
        a.set_title(title or " / ".join(str(s) for s in (fbname, label.get("mode")) if s is not None), fontsize=9)
        if annotate:
            for i in range(z.shape[0]):
                for j in range(z.shape[1]):
                    if np.isfinite(z[i, j]):
                        a.text(j, i, f"{100 * z[i, j]:+.1f}" if z[i, j] != 0 else "0", ha="center",
                               va="center", fontsize=6,
                               color="white" if abs(z[i, j]) > 0.6 * vmax else "black")
    if im is not None:
        cb = fig.colorbar(im, ax=list(axes[:len(groups)]), shrink=0.8)
        cb.set_label(f"{value}: (simulation - nearest bound) / band midpoint" + ("\n(cells: the same in %)" if annotate else ""))
    return fig
