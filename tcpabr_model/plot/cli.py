"""``tcpabr plot``: draw a column of a sweep table against another, one curve per group; or
the front of a ``tcpabr design --json`` result (throughput against p95 delay).

    tcpabr sweep simulation --grid psi=logspace:0.1:100:7 --grid feedback=instcap,none --out sweep.csv
    tcpabr plot sweep.csv --x psi --y efficiency --hue feedback --out fig.png
    tcpabr design --delta 40 --bmax 10 --psi 1 --json > design.json
    tcpabr plot design.json --out front.png
"""

from __future__ import annotations

import argparse
import os

_FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


def register(sub) -> None:
    """Add the ``plot`` subcommand."""
    p = sub.add_parser(
        "plot", help="plot a sweep table (CSV or Parquet written by tcpabr sweep --out) or a design's front "
                     "(JSON written by tcpabr design --json)",
        description=__doc__)
    p.add_argument("table", metavar="TABLE", help="sweep table, .csv or .parquet (tcpabr sweep --out); or "
                                                  ".json printed by tcpabr design --json (its front)")
    p.add_argument("--x", default=None, help="column on the horizontal axis, e.g. psi (a table: required)")
    p.add_argument("--y", default=None, help="column on the vertical axis, e.g. efficiency; its 95 %% "
                                             "half-width column Y_hw, if present, gives error bars (a table: "
                                             "required)")
    p.add_argument("--hue", default=None, help="column whose values split the rows into curves, e.g. feedback")
    p.add_argument("--logx", choices=("auto", "yes", "no"), default="auto",
                   help="logarithmic x axis; auto: when x > 0 spans a factor of 20 or more")
    p.add_argument("--title", default=None, help="figure title")
    p.add_argument("--out", default=None, metavar="FIG.png|.pdf|.svg",
                   help="figure file (default: TABLE's name with _Y_vs_X.png, next to it)")
    p.set_defaults(func=_run)


def _read(path: str):
    if not os.path.isfile(path):
        raise ValueError(f"TABLE {path!r} is invalid: {'it is a folder' if os.path.isdir(path) else 'no such file'}")
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".csv", ".parquet"):
        raise ValueError(f"TABLE {path!r} is invalid: must end in .csv or .parquet")
    import pandas as pd

    try:
        return pd.read_csv(path) if ext == ".csv" else pd.read_parquet(path)
    except ImportError:
        raise ValueError(f"TABLE {path!r} is invalid: Parquet needs pyarrow (python3 -m pip install pyarrow)") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"TABLE {path!r} is invalid: cannot read it as a table "
                         f"({' '.join(str(exc).split())})") from None


def _run_design(args: argparse.Namespace) -> int:
    """``tcpabr plot DESIGN.json``: the front of a ``tcpabr design --json`` result."""
    import json

    from ..runtime.paths import check_output_file

    for flag, v in (("--x", args.x), ("--y", args.y), ("--hue", args.hue)):
        if v is not None:
            raise ValueError(f"{flag} is invalid with a design result (.json): its axes are p95 delay and throughput")
    if not os.path.isfile(args.table):
        raise ValueError(f"TABLE {args.table!r} is invalid: no such file")
    out = args.out or os.path.splitext(args.table)[0] + "_front.png"
    check_output_file(out, "--out", _FIGURE_SUFFIXES)
    try:
        with open(args.table, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueError(f"TABLE {args.table!r} is invalid: not JSON ({' '.join(str(exc).split())})") from None
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "cairo"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._design import plot_design

    if not isinstance(d, dict):
        raise ValueError(f"TABLE {args.table!r} is invalid: not the output of tcpabr design --json")
    try:
        fig = plot_design(d)
    except (KeyError, TypeError):
        raise ValueError(f"TABLE {args.table!r} is invalid: not the output of tcpabr design --json") from None
    if args.title:
        fig.suptitle(args.title)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out} (throughput against p95 delay)")
    return 0


def _run(args: argparse.Namespace) -> int:
    from ..runtime.paths import check_output_file

    if args.table.lower().endswith(".json"):
        return _run_design(args)
    for flag, v in (("--x", args.x), ("--y", args.y)):
        if v is None:
            raise ValueError(f"the following arguments are required: {flag} (with a table, .csv or .parquet)")
    out = args.out or os.path.splitext(args.table)[0] + f"_{args.y}_vs_{args.x}.png"
    check_output_file(out, "--out", _FIGURE_SUFFIXES)
    df = _read(args.table)
    for flag, col in (("--x", args.x), ("--y", args.y), ("--hue", args.hue)):
        if col is not None and col not in df.columns:
            raise ValueError(f"{flag}={col!r} is invalid: not a column of {args.table} "
                             f"(columns: {', '.join(df.columns)})")
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    import pandas as pd

    for flag, col in (("--x", args.x), ("--y", args.y)):
        if not pd.api.types.is_numeric_dtype(df[col]):
            raise ValueError(f"{flag}={col!r} is invalid: the column is not numeric")
    df = df[df[args.x].notna() & df[args.y].notna()]
    if df.empty:
        raise ValueError(f"TABLE {args.table!r} is invalid: no row with both {args.x} and {args.y}")
    fig = plot_table(df, args.x, args.y, hue=args.hue, logx=args.logx, title=args.title)
    import matplotlib.pyplot as plt

    from ..runtime.atomic import save_figure

    try:
        save_figure(fig, out, dpi=110)
    finally:
        plt.close(fig)
    print(f"wrote {out} ({len(df)} rows{'' if args.hue is None else f', {df[args.hue].nunique()} curves'})")
    return 0


def plot_table(df, x: str, y: str, *, hue: str | None = None, logx: str = "auto", title: str | None = None):
    """Figure of column ``y`` against ``x``: one line per value of ``hue``, error bars from ``y + '_hw'``.

    ``logx``: ``"yes"``, ``"no"`` or ``"auto"`` (log when every x is > 0 and max/min >= 20).
    """
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "cairo"):
        matplotlib.use("Agg")  # a command-line figure is written to a file, never shown
    import matplotlib.pyplot as plt

    from ._efficiency import _groups, _legend, log_axis

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    hw = f"{y}_hw"
    for i, (name, g) in enumerate(_groups(df, hue)):
        g = g.sort_values(x)
        yerr = g[hw].fillna(0.0).to_numpy() if hw in g.columns and g[hw].notna().any() else None
        ax.errorbar(g[x], g[y], yerr=yerr, fmt="osD^v<>"[i % 7], ms=4, capsize=2, ls="-", lw=0.9,
                    color=f"C{i % 10}", label=name)
    xs = df[x].astype(float)
    if logx == "yes" and not (xs > 0).all():
        raise ValueError(f"--logx=yes is invalid: {x} has values <= 0")
    if logx == "yes" or (logx == "auto" and (xs > 0).all() and xs.max() / xs.min() >= 20):
        log_axis(ax.xaxis)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    _legend(ax)
    fig.tight_layout()
    return fig
