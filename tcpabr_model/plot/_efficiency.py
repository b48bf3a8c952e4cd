"""Efficiency and fairness against psi: bound bands and simulation points with error bars."""

from __future__ import annotations

import pandas as pd

__all__ = ["plot_efficiency_vs_psi", "plot_fairness_vs_psi", "log_axis", "PSI_LABEL", "EFFICIENCY_LABEL"]

PSI_LABEL = r"$\psi = \tau/\Delta$ (mean time per capacity state / round-trip delay, dimensionless)"
EFFICIENCY_LABEL = "efficiency (throughput / mean capacity)"


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def _groups(df: pd.DataFrame, by):
    if by is None:
        yield None, df
        return
    cols = [by] if isinstance(by, str) else list(by)
    for key, g in df.groupby(cols, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        if len(key) > len(cols):
            key = key[: len(cols)]
        # a text value names itself ("EFFCAP"); a number needs its column ("bmax=10")
        yield ", ".join(k if isinstance(k, str) else f"{c}={_fmt(k)}" for c, k in zip(cols, key)), g


def _fmt(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def log_axis(axis) -> None:
    """Logarithmic ``axis`` with plain-number labels at 1, 2 and 5 per decade (``20``, ``50``, ``100``).

    A span of less than a decade or two otherwise shows a single labelled tick; over
    more than four decades only the decades are labelled, to keep the labels apart.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if axis is axis.axes.xaxis:
        axis.axes.set_xscale("log")
    else:
        axis.axes.set_yscale("log")
    lo, hi = sorted(abs(v) for v in axis.get_data_interval())
    decades = _decades(lo, hi)
    subs = (1.0,) if decades > 4 else (1.0, 2.0, 5.0)
    axis.set_major_locator(LogLocator(base=10.0, subs=subs, numticks=40))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_locator(LogLocator(base=10.0, subs=tuple(range(2, 10)), numticks=40))
    axis.set_minor_formatter(NullFormatter())


def _decades(lo: float, hi: float) -> float:
    import math

    if not (lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi)):
        return 0.0
    return math.log10(hi / lo)


def _legend(ax) -> None:
    """A compact legend; error bars are 95 % confidence intervals, said once in its title."""
    from matplotlib.container import ErrorbarContainer

    if not ax.get_legend_handles_labels()[0]:
        return
    has_bars = any(isinstance(c, ErrorbarContainer) and c.has_yerr for c in ax.containers)
    ax.legend(fontsize=7, title="bars: 95 % CI" if has_bars else None, title_fontsize=7)


def _short(base: str | None, kind: str, both: bool) -> str:
    """Legend entry: the curve's name, with the kind (analysis band or simulation) only where both are drawn."""
    if base is None:
        return "analysis bounds" if kind == "analysis" else "simulation"
    return f"{base} ({kind})" if both else base


def _has(g: pd.DataFrame, col: str | None) -> bool:
    return col is not None and col in g.columns and g[col].notna().any()


def _psi_axes(df: pd.DataFrame, psi: str, ax):
    """The axes to draw into (a new figure when ``ax`` is None), once ``psi`` is known to be a column."""
    if psi not in df.columns:
        raise ValueError(f"psi={psi!r} is invalid: not a column of df (columns {list(df.columns)})")
    return _axes(ax)


def _curves(df: pd.DataFrame, by, psi: str, colors):
    """``(i, name, colour, rows sorted by psi)`` of each curve (one per group of ``by``)."""
    for i, (name, g) in enumerate(_groups(df, by)):
        yield i, name, (colors[i % len(colors)] if colors else f"C{i % 10}"), g.sort_values(psi)


def _finish(ax, logx: bool, xlabel, ylabel: str, title, ylim=None):
    """Psi axis (logarithmic when ``logx``), labels, range, title, grid and legend; returns ``ax``."""
    if logx:
        log_axis(ax.xaxis)
    ax.set_xlabel(xlabel or PSI_LABEL)
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    _legend(ax)
    return ax


def plot_efficiency_vs_psi(df: pd.DataFrame, *, by=None, ax=None, psi: str = "psi",
                           value: str = "efficiency", half_width: str | None = "efficiency_hw",
                           lower: str = "conservative", upper: str = "optimistic",
                           label: str | None = None, xlabel: str | None = None,
                           ylabel: str | None = None, title: str | None = None, logx: bool = True,
                           band_alpha: float = 0.2, markers: str = "osD^vx+*", colors=None,
                           ylim=(0.0, 1.02)):
    """Efficiency against psi (Figs. 8-16 of seed 004).

    Rows with ``lower``/``upper`` columns (the analysis' conservative and optimistic
    bounds, e.g. from ``run_sweep("analysis", ...)``) are drawn as a shaded band between
    the two bounds; rows with a ``value`` column (e.g. ``run_sweep("simulation", ...)``)
    as points with 95 % error bars of ``half_width``.  Both can be in one table.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per point; must have the ``psi`` column.
    by : str or list of str, optional
        Columns whose values split the rows into curves (one colour per curve).
    ax : matplotlib.axes.Axes, optional
        Drawn into; a new figure when omitted.
    psi, value, half_width, lower, upper : str
        Column names (``half_width=None``: no error bars).
    label : str, optional
        Prefix of the legend entries.
    xlabel, ylabel, title : str, optional
        Axis labels (defaults state the units: psi dimensionless, efficiency as a fraction
        of the mean capacity).
    logx : bool, optional(default=True)
        Logarithmic psi axis.
    colors : sequence of matplotlib colours, optional
        One per curve (default the colour cycle C0, C1, ...).
    ylim : (float, float) or None, optional(default=(0, 1.02))
        Efficiency axis range (None: matplotlib's automatic range).

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _psi_axes(df, psi, ax)
    both = _has(df, lower) and _has(df, upper) and _has(df, value)
    for i, name, color, g in _curves(df, by, psi, colors):
        base = ", ".join(x for x in (label, name) if x) or None
        if _has(g, lower) and _has(g, upper):
            b = g[g[lower].notna() & g[upper].notna()]
            ax.fill_between(b[psi], b[lower], b[upper], color=color, alpha=band_alpha, lw=0,
                            label=_short(base, "analysis", both))
            ax.plot(b[psi], b[upper], "-", color=color, lw=1)
            ax.plot(b[psi], b[lower], "--", color=color, lw=1)
        if _has(g, value):
            s = g[g[value].notna()]
            yerr = s[half_width].fillna(0.0).to_numpy() if _has(s, half_width) else None
            ax.errorbar(s[psi], s[value], yerr=yerr, fmt=markers[i % len(markers)], ms=4, capsize=2,
                        color=color, ls=":" if len(s) > 1 else "none", lw=0.8,
                        label=_short(base, "sim.", both))
    return _finish(ax, logx, xlabel, ylabel or EFFICIENCY_LABEL, title, ylim)


def plot_fairness_vs_psi(df: pd.DataFrame, *, by=None, ax=None, psi: str = "psi",
                         value: str = "fairness", half_width: str | None = "fairness_hw",
                         per_connection: bool = False, label: str | None = None,
                         xlabel: str | None = None, ylabel: str | None = None,
                         title: str | None = None, logx: bool = True, colors=None):
    """Jain's fairness index (or each connection's efficiency) against psi (Figs. 19-22).

    Parameters not listed below are as in :func:`plot_efficiency_vs_psi`.

    Parameters
    ----------
    df : pandas.DataFrame
        Simulation rows (``run_sweep("simulation", ...)``): ``psi``, ``fairness``,
        ``fairness_hw`` and, per connection i, ``eff_conn{i}`` and ``eff_conn{i}_hw``.
    by : str or list of str, optional
        Columns whose values split the rows into curves.
    per_connection : bool, optional(default=False)
        Plot each connection's efficiency (its goodput in IP bytes / mean capacity, so
        they sum to the total efficiency) instead of Jain's index.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _psi_axes(df, psi, ax)
    conns = sorted(int(c[len("eff_conn"):]) for c in df.columns
                   if c.startswith("eff_conn") and c[len("eff_conn"):].isdigit())
    if per_connection and not conns:
        raise ValueError("per_connection=True is invalid: df has no eff_conn{i} columns")
    for _, name, color, g in _curves(df, by, psi, colors):
        base = " ".join(x for x in (label, name) if x)
        if per_connection:
            for j, c in enumerate(conns):
                col = f"eff_conn{c}"
                if not _has(g, col):
                    continue
                s = g[g[col].notna()]
                hw = f"{col}_hw"
                yerr = s[hw].fillna(0.0).to_numpy() if _has(s, hw) else None
                ax.errorbar(s[psi], s[col], yerr=yerr, fmt="os^D"[j % 4], ms=4, capsize=2, color=color,
                            ls=("-", "--", ":", "-.")[j % 4], lw=0.9,
                            label=f"{base + ': ' if base else ''}connection {c + 1}")
        else:
            s = g[g[value].notna()]
            yerr = s[half_width].fillna(0.0).to_numpy() if _has(s, half_width) else None
            ax.errorbar(s[psi], s[value], yerr=yerr, fmt="o", ms=4, capsize=2, color=color, ls="-", lw=0.9,
                        label=base or None)
    default_ylabel = ("per-connection efficiency (IP-byte goodput / mean capacity)" if per_connection
                      else "Jain's fairness index of the goodputs (dimensionless)")
    return _finish(ax, logx, xlabel, ylabel or default_ylabel, title)

