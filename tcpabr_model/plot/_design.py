"""The feedback designer's front: throughput against p95 delay (issue 26 item 4).

:func:`plot_design_front` draws one design (a :class:`tcpabr_model.design.Design` or its
``to_dict()``, the JSON of ``tcpabr design --json``) on one Axes; :func:`plot_design`
draws whatever ``tcpabr design --json`` printed: one panel for a single design, one per
half for a held-out design (the held-out replay of the chosen designs marked on it), one
per psi for a robust design over psi.
"""

from __future__ import annotations

__all__ = ["plot_design_front", "plot_design"]

# how the references are marked: (marker, colour, size)
_STYLE = {"TCP alone": ("s", "C3", 60), "INSTCAP": ("D", "C0", 60), "EFFCAP paper rule": ("^", "C2", 70)}


def _as_dict(d) -> dict:
    if isinstance(d, dict):
        return d
    to = getattr(d, "to_dict", None)
    if to is None:
        raise ValueError(f"design={d!r} is invalid: must be a tcpabr_model.design result or its to_dict()")
    return to()


def _val(e) -> tuple:
    """(mean, half width or 0) of an Estimate's dict."""
    hw = e.get("half_width")
    return float(e["mean"]), 0.0 if hw is None else float(hw)


def plot_design_front(design, ax=None, *, title: str | None = None, held_out: dict | None = None):
    """Throughput (efficiency) against p95 delay (ms) of every candidate of ``design``.

    TCP alone, INSTCAP and the paper's EFFCAP rule are marked by name, the other candidates
    (the designed points) as circles, the Pareto front joined by a line, the best design
    within the limit ringed, the p95 limit dashed; 95 % intervals as error bars.
    ``held_out``: a held-out round's ``held_out`` dict (:class:`HeldOutRound.to_dict`), whose
    points are drawn hollow (the replay of the chosen designs on the other half).
    Returns the Axes.
    """
    import matplotlib.pyplot as plt

    d = _as_dict(design)
    if "points" not in d:
        raise ValueError("design is invalid: a single design (with 'points') is needed; plot_design draws the "
                         "held-out and psi results")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    best = None if d.get("best") is None else d["best"]["candidate"]["label"]
    front, labels, markers = [], [], []
    for p in d["points"]:
        lab = p["candidate"]["label"]
        y, yh = _val(p["throughput"])
        x, xh = _val(p["p95_delay_s"])
        x, xh = 1e3 * x, 1e3 * xh
        mk, col, size = _STYLE.get(lab, ("o", "0.45", 28))
        # a delay is >= 0: the interval's lower arm stops at 0 (a t interval of 2-3 replications
        # can reach below it)
        ax.errorbar(x, y, xerr=[[min(xh, x)], [xh]], yerr=yh, fmt="none", ecolor=col, alpha=0.35, lw=0.8)
        ax.scatter([x], [y], marker=mk, s=size, color=col, zorder=3,
                   label=lab if lab in _STYLE else None)
        markers.append((x, y, 9.0 if lab == best else 0.5 * size ** 0.5))
        if lab not in _STYLE:
            labels.append((x, y, lab.replace("EFFCAP ", "")))
        if lab == best:
            ax.scatter([x], [y], marker="o", s=260, facecolors="none", edgecolors="k", zorder=4,
                       label=f"best: {lab}")
        if p["on_front"]:
            front.append((x, y))
    if front:
        front.sort()
        ax.plot([f[0] for f in front], [f[1] for f in front], "-", color="k", lw=0.9, alpha=0.6,
                label="Pareto front", zorder=2)
    if held_out is not None:
        for p in held_out["points"]:
            lab = p["candidate"]["label"]
            mk, col, size = _STYLE.get(lab, ("o", "C1", 40))
            ax.scatter([1e3 * p["p95_delay_s"]["mean"]], [p["throughput"]["mean"]], marker=mk, s=size + 30,
                       facecolors="none", edgecolors=col, lw=1.4, zorder=5)
        ax.scatter([], [], marker="o", facecolors="none", edgecolors="0.3", label="held-out half (hollow)")
    xs = [1e3 * p["p95_delay_s"]["mean"] for p in d["points"] if p["p95_delay_s"]["mean"] is not None]
    xs = [x for x in xs if x == x and x > 0]
    if xs and max(xs) / min(xs) >= 10:
        from ._efficiency import log_axis

        log_axis(ax.xaxis)
    if ax.get_xscale() == "linear":
        ax.set_xlim(left=0.0)
    lim = d.get("max_p95_delay_s")
    if lim is not None:
        ax.axvline(1e3 * lim, ls="--", color="0.5", lw=0.8, label=f"p95 limit {1e3 * lim:.4g} ms")
    if held_out is not None:
        markers += [(1e3 * p["p95_delay_s"]["mean"], p["throughput"]["mean"], 5.0) for p in held_out["points"]]
    _place_labels(ax, labels, markers)
    ax.set_xlabel("p95 delay per delivered segment, ms (source buffer + bottleneck queue)")
    ax.set_ylabel("throughput (efficiency)")
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title, fontsize=9)
    # below the axes, where it covers no point (the front's points crowd every corner)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
    return ax


# the offsets (points) tried in turn for a candidate's label: right-above first, then stacked
_OFFSETS = [(4, 3), (4, -9), (4, 12), (4, -18), (4, 21), (4, -27), (-4, 3), (-4, -9), (-4, 12), (-4, -18),
            (4, 30), (4, -36)]


def _place_labels(ax, labels: list, markers: list = ()) -> list:
    """Annotate each ``(x, y, text)`` at the first offset of ``_OFFSETS`` whose text box overlaps
    no label placed before and no marker at ``markers`` (``(x, y, radius in points)``) and lies
    inside the axes (boxes estimated in display pixels from the font size), else at the first.
    Returns the offsets used, in the order of ``labels``."""
    if not labels:
        return []
    size = 6.5
    px = ax.figure.dpi / 72.0
    h, cw = 1.25 * size * px, 0.58 * size * px  # line height and mean character width, pixels
    ax.get_xlim(), ax.get_ylim()               # autoscale now: the transform below is final
    frame = ax.get_window_extent()             # the axes' box: a label stays inside it where it can
    placed = []
    for x, y, rad in markers:
        X, Y = ax.transData.transform((x, y))
        placed.append((X - rad * px, Y - rad * px, X + rad * px, Y + rad * px))
    used = [None] * len(labels)
    for i in sorted(range(len(labels)), key=lambda i: (labels[i][0], -labels[i][1])):
        x, y, text = labels[i]
        X, Y = ax.transData.transform((x, y))
        w = cw * len(text)
        choice = _OFFSETS[0]
        for dx, dy in _OFFSETS:
            x0 = X + dx * px if dx >= 0 else X + dx * px - w
            y0 = Y + dy * px
            box = (x0, y0, x0 + w, y0 + h)
            inside = frame.x0 <= box[0] and box[2] <= frame.x1 and frame.y0 <= box[1] and box[3] <= frame.y1
            if inside and not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
                choice = (dx, dy)
                break
        dx, dy = choice
        x0 = X + dx * px if dx >= 0 else X + dx * px - w
        placed.append((x0, Y + dy * px, x0 + w, Y + dy * px + h))
        used[i] = choice
        # a label moved off its point is tied to it by a thin line
        arrow = None if choice == _OFFSETS[0] else dict(arrowstyle="-", color="0.6", lw=0.5, shrinkA=0, shrinkB=2)
        ax.annotate(text, (x, y), fontsize=size, xytext=choice, textcoords="offset points", color="0.3",
                    ha="left" if dx >= 0 else "right", va="bottom", arrowprops=arrow)
    return used


def plot_design(result):
    """A Figure of any ``tcpabr design`` result (see the module docstring)."""
    import matplotlib.pyplot as plt

    d = _as_dict(result)
    if "rounds" in d:
        panels = [(r["designed"], f"designed on {r['design_half']}\n(hollow: replay on the other half)",
                   r["held_out"]) for r in d["rounds"]]
    elif "per_psi" in d:
        panels = [(x, f"psi = {x['psi']:g}" + (f" (robust: {d['robust']})" if d.get("robust") else ""), None)
                  for x in d["per_psi"]]
    elif "points" in d:
        panels = [(d, None, None)]
    else:
        raise ValueError("result is invalid: not the output of tcpabr design --json (no 'points', 'rounds' or "
                         "'per_psi')")
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(6.0 * n, 4.6), squeeze=False)
    for ax, (dd, title, ho) in zip(axes[0], panels):
        plot_design_front(dd, ax, title=title, held_out=ho)
    fig.tight_layout()
    return fig
