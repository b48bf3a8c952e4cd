"""Figs. 19-22: two TCP sessions over ABR with EFFCAP feedback, fairness (Section VII).

Seed 004: Delta_1 = 240 ms, Delta_2 = 360 ms, buffer 9000 B (18 packets), psi = tau /
Delta_2, each session fed back half of its EFFCAP estimate.  Case 1 (Figs. 19, 20):
M_i : Delta_i (M = 8, 12) and N_i : 12 Delta_i (N = 88, 132).  Case 2 (Figs. 21, 22):
M = 10, N = 110 for both.  Figs. 20 and 22 compare with TCP alone (same two sessions,
no ABR); INSTCAP (Case 1's M = N = 1) is added as a reference, as the paper cites [19].
"""

from __future__ import annotations

from ._figure_helpers import S, WMAX, no_data, ok, rows, series, sig_pos
from ._report import decisive, decisive_pair
from ._spec import Claim, Est, FigureSpec, Part, Verdict

RTTS = [0.24, 0.36]
CASES = {
    "EFFCAP case 1": dict(feedback="effcap", m=[8, 12], n=[88, 132]),
    "EFFCAP case 2": dict(feedback="effcap", m=[10, 10], n=[110, 110]),
    "INSTCAP": dict(feedback="instcap"),
    "TCP alone": dict(feedback="none"),
}


def _psis(size):
    if size.name == "tiny":
        return [0.1, 10.0]
    if size.name == "quick":
        return [0.1, 0.3, 1.0, 3.0, 10.0, 50.0]
    return [0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0]


def parts(size):
    from ..sweep import Grid

    out = []
    for name, kw in CASES.items():
        pts = [dict(rtt=RTTS, tau=round(p * RTTS[1], 9), buffer_packets=18, interval=S, tcp_wmax=WMAX,
                    **kw, **size.sim_fixed()) for p in _psis(size)]
        out.append(Part("simulation", Grid.from_points(pts), {"case": name}))
    return out


def draw(df):
    import matplotlib.pyplot as plt

    from ..plot import plot_efficiency_vs_psi, plot_fairness_vs_psi

    df = ok(df)
    fig, axes = plt.subplots(2, 3, figsize=(17, 9))
    xl = r"$\psi = \tau/\Delta_2$ ($\Delta_2$ = 360 ms; dimensionless)"
    for row, (case, f_small, f_cmp) in enumerate((("EFFCAP case 1", 19, 20), ("EFFCAP case 2", 21, 22))):
        s = rows(df, case=case)
        small = s[s["psi"] <= 1.0 + 1e-9]
        if len(small):
            plot_fairness_vs_psi(small, ax=axes[row, 0], per_connection=True, label=case, xlabel=xl)
        axes[row, 0].set_title(f"Fig. {f_small}: {case}, psi <= 1 (connection 1: 240 ms, 2: 360 ms)", fontsize=9)
        both = df[df["case"].isin([case, "TCP alone"])]
        if len(both):
            plot_fairness_vs_psi(both, by="case", ax=axes[row, 1], per_connection=True, xlabel=xl)
        axes[row, 1].set_title(f"Fig. {f_cmp}: {case} vs TCP alone, per session", fontsize=9)
    if len(df):
        plot_fairness_vs_psi(df, by="case", ax=axes[0, 2], xlabel=xl)
        plot_efficiency_vs_psi(df, by="case", ax=axes[1, 2], xlabel=xl,
                               ylabel="total efficiency (IP bytes / mean capacity on the wire)", ylim=None)
    axes[0, 2].set_title("Jain's index of the two goodputs", fontsize=9)
    axes[1, 2].set_title("total efficiency of the two sessions (cell tax counts as lost capacity)", fontsize=9)
    fig.suptitle("Two sessions, Delta = 240 and 360 ms, buffer 18 packets, 100 / 50 kB/s, s = 30 ms, half of the "
                 "estimate fed back to each", fontsize=10)
    fig.tight_layout()
    return fig


def _conn(df, case, i):
    return series(df, "psi", f"eff_conn{i}", case=case)


def _ratio(df, case):
    a, b = _conn(df, case, 0), _conn(df, case, 1)
    return {p: a[p].rel_to(b[p]) for p in sorted(set(a) & set(b))}


def _check_equal(df):
    r = {p: v for p, v in _ratio(df, "EFFCAP case 1").items() if p < 0.3}
    if not r:
        return no_data("Case 1 at psi < 0.3")
    lines = tuple(f"psi {p:g}: session 1 / session 2 - 1 = {v.fmt(1, pct=True)}" for p, v in r.items())
    if all(abs(v.mean) <= 0.05 for v in r.values()):
        return Verdict("supported", "the two sessions' efficiencies differ by <= 5 % at every psi < 0.3 (largest "
                       f"|difference| {decisive(max(abs(v.mean) for v in r.values()), 0.05, 1, 100)} %)", lines)
    worst = max(r, key=lambda p: abs(r[p].mean))
    return Verdict("not supported", f"the sessions differ by more than 5 % at some psi < 0.3 (largest: psi {worst:g}, "
                   f"{decisive(r[worst].mean, 0.05 if r[worst].mean > 0 else -0.05, 1, 100, sign=True)} %)", lines)


def _check_unfair(df):
    r = {p: v for p, v in _ratio(df, "EFFCAP case 1").items() if 0.3 < p < 20}
    if not r:
        return no_data("Case 1 at 0.3 < psi < 20")
    lines = tuple(f"psi {p:g}: session 1 (240 ms) / session 2 (360 ms) - 1 = {v.fmt(1, pct=True)}" for p, v in r.items())
    sig = [sig_pos(v) for v in r.values()]
    if all(sig):
        return Verdict("supported", "the 360 ms session gets significantly less at every psi in (0.3, 20)", lines)
    if any(sig):
        miss = "; ".join(f"psi {p:g}: {v.fmt(1, pct=True)}" for (p, v), g in zip(r.items(), sig) if not g)
        return Verdict("partly", f"the 360 ms session gets significantly less at {sum(sig)} of {len(sig)} psi values "
                       f"in (0.3, 20); the rule asks for every one (not significantly less at {miss})", lines)
    return Verdict("not supported", "no significant unfairness toward the 360 ms session in (0.3, 20)", lines)


def _check_vs_tcp(df):
    a = series(df, "psi", "fairness", case="EFFCAP case 1")
    t = series(df, "psi", "fairness", case="TCP alone")
    pts = sorted(set(a) & set(t))
    if not pts:
        return no_data("Jain's index for Case 1 and TCP alone")
    lines = tuple(f"psi {p:g}: Jain EFFCAP case 1 {a[p].fmt(4)} vs TCP alone {t[p].fmt(4)}" for p in pts)
    fairer = all(sig_pos(a[p] - t[p]) for p in pts)
    gross = min(t[p].mean for p in pts) <= 0.9
    if fairer and gross:
        return Verdict("supported", f"EFFCAP's Jain index is significantly above TCP alone's at every psi ({len(pts)} "
                       f"of {len(pts)}), and TCP alone's drops to {min(t[p].mean for p in pts):.4f} <= 0.9 (CHOICE: "
                       "'grossly unfair')", lines)
    n_fair = sum(sig_pos(a[p] - t[p]) for p in pts)
    low = min(t[p].mean for p in pts)
    why = (f"EFFCAP's Jain index is significantly above TCP alone's at {n_fair} of {len(pts)} psi values; TCP "
           f"alone's lowest is {decisive(low, 0.9, 4)} ({'at or below' if gross else 'above'} the 0.9 of 'grossly "
           "unfair')")
    if fairer or n_fair:
        return Verdict("partly", why, lines)
    return Verdict("not supported", f"EFFCAP is not fairer than TCP alone: {why}", lines)


def _check_case2_fairer(df):
    r1, r2 = _ratio(df, "EFFCAP case 1"), _ratio(df, "EFFCAP case 2")
    pts = [p for p in sorted(set(r1) & set(r2)) if 0.3 <= p <= 20]
    if not pts:
        return no_data("both cases at 0.3 <= psi <= 20")
    lines = tuple(f"psi {p:g}: session 1 / session 2 - 1: case 1 {r1[p].fmt(1, pct=True)}, case 2 "
                  f"{r2[p].fmt(1, pct=True)}" for p in pts)
    better = [abs(r2[p].mean) < abs(r1[p].mean) for p in pts]
    avg1 = sum(abs(r1[p].mean) for p in pts) / len(pts)
    avg2 = sum(abs(r2[p].mean) for p in pts) / len(pts)
    lines += (f"mean |imbalance| over 0.3 <= psi <= 20: case 1 {100 * avg1:.1f} %, case 2 {100 * avg2:.1f} %",)
    k, n = sum(better), len(better)
    count = f"{k} of {n} psi values in [0.3, 20] ({100 * k / n:.0f} %)"
    means = "mean |imbalance| {} % in Case 2 vs {} % in Case 1".format(*decisive_pair(avg2, avg1, 1, 100))
    worse = "; ".join("psi {:g}: |imbalance| {} % in Case 2 vs {} % in Case 1".format(
        p, *decisive_pair(abs(r2[p].mean), abs(r1[p].mean), 1, 100)) for p, b in zip(pts, better) if not b)
    if k >= 0.8 * n and avg2 < avg1:
        return Verdict("supported", f"Case 2 is more balanced at {count}, at least the 80 % the criterion asks, and "
                       f"on average ({means})", lines)
    if avg2 < avg1:
        return Verdict("partly", f"Case 2 is more balanced on average ({means}) but only at {count}, below the 80 % "
                       f"the criterion asks (not more balanced at {worse})", lines)
    return Verdict("not supported", f"Case 2 is not more balanced than Case 1 on average ({means}); it is more "
                   f"balanced at {count}", lines)


def _check_case2_drop(df):
    t1, t2 = series(df, "psi", case="EFFCAP case 1"), series(df, "psi", case="EFFCAP case 2")
    s1a, s1b = _conn(df, "EFFCAP case 1", 0), _conn(df, "EFFCAP case 2", 0)
    pts = sorted(set(t1) & set(t2) & set(s1a) & set(s1b))
    if not pts:
        return no_data("both cases")
    dt = Est.average([t2[p] - t1[p] for p in pts])
    d1 = Est.average([s1b[p] - s1a[p] for p in pts])
    lines = (f"mean over psi of total(case 2) - total(case 1) = {dt.fmt(4)}",
             f"mean over psi of session 1 (240 ms): case 2 - case 1 = {d1.fmt(4)}")
    both = f"total {dt.fmt(4)}, session 1 {d1.fmt(4)}; significant = the 95 % CI below 0"
    if dt.hi < 0 and d1.hi < 0:
        return Verdict("supported", "the total efficiency and the 240 ms session's share are both significantly "
                       f"lower in Case 2 ({both})", lines)
    if dt.mean < 0 or d1.mean < 0:
        return Verdict("partly", f"lower in Case 2 but not significantly for both ({both})", lines)
    return Verdict("not supported", f"Case 2 does not lose overall efficiency ({both})", lines)


def _slight_case(case, d):
    """One case's mean total / TCP alone - 1 against the 10 % of 'slight' (point estimate decides)."""
    x = f"{decisive(d.mean, -0.10, 1, 100, sign=True)} % ± {100 * d.hw:.1f}"
    if d.mean >= 0:
        return f"{case} {x} (not below TCP alone)"
    side = "within the 10 %" if d.mean >= -0.10 else "beyond the 10 %"
    ci = f"[{100 * d.lo:.1f} %, {100 * d.hi:.1f} %]"
    straddle = "includes" if d.lo <= -0.10 <= d.hi else "excludes"
    return f"{case} {x} ({side}; its 95 % CI {ci} {straddle} -10 %)"


def _check_slight(df):
    t = series(df, "psi", case="TCP alone")
    lines, drops = [], {}
    for case in ("EFFCAP case 1", "EFFCAP case 2"):
        e = series(df, "psi", case=case)
        pts = sorted(set(e) & set(t))
        if not pts:
            continue
        d = Est.average([e[p].rel_to(t[p]) for p in pts])
        drops[case] = d
        lines.append(f"{case} total / TCP alone total - 1, mean over psi: {d.fmt(1, pct=True)}")
    if not drops:
        return no_data("EFFCAP and TCP alone totals")
    per_case = "; ".join(_slight_case(c, d) for c, d in drops.items())
    if all(-0.10 <= d.mean < 0 for d in drops.values()):
        return Verdict("supported", "the total efficiency over ABR is below TCP alone's by at most 10 % on average "
                       f"(CHOICE: 'slight'; point estimates): {per_case}", tuple(lines))
    if all(d.mean < 0 for d in drops.values()):
        return Verdict("partly", "below TCP alone, but by more than the 10 % called 'slight' (point estimate of the "
                       f"mean over psi) in at least one case: {per_case}", tuple(lines))
    return Verdict("not supported", f"the total efficiency over ABR is not below TCP alone's in at least one case: "
                   f"{per_case}",
                   tuple(lines))


CLAIMS = (
    Claim("Fig. 19", "It can be seen that for very small values of ψ (ψ < 0.3), the sessions receive equal "
          "throughput.",
          "CHOICE: 'equal' = session efficiencies within 5 %. Supported if so at every psi < 0.3 (Case 1).",
          _check_equal),
    Claim("Figs. 19-20", "However, for 0.3 < ψ < 20, unfairness is seen toward the session with larger propagation "
          "delay.",
          "Supported if session 1 (240 ms) gets significantly more than session 2 (360 ms) at every grid psi in "
          "(0.3, 20) (Case 1).", _check_unfair),
    Claim("Fig. 20", "The throughputs with TCP over ABR are, however, fairer than with TCP alone which results in "
          "grossly unfair throughputs.",
          "Supported if Jain's index with EFFCAP Case 1 is significantly above TCP alone's at every psi and TCP "
          "alone's falls to 0.9 or below somewhere.", _check_vs_tcp),
    Claim("Figs. 21-22", "We notice that EFFCAP calculated in this way yields somewhat better fairness than the scheme "
          "used in Case 1. It is also seen that better fairness is obtained even in the intermediate range of ψ.",
          "Imbalance = |session 1 / session 2 - 1|. Supported if Case 2's is smaller at >= 80 % of the psi values "
          "in [0.3, 20] and on average.", _check_case2_fairer),
    Claim("Figs. 21-22", "However, there is a drop in the overall efficiency. This is because the throughput of the "
          "session with smaller Δ is reduced.",
          "Supported if the mean over psi of the total efficiency and of session 1's efficiency are both "
          "significantly lower in Case 2 than in Case 1.", _check_case2_drop),
    Claim("Fig. 22", "There is a slight decrease in the overall efficiency with TCP over ABR, but note that with TCP "
          "over ABR, the link actually carries 10% more bytes (the ATM overhead) than with TCP alone!",
          "Supported if the total efficiency with EFFCAP (both cases) is below TCP alone's by at most 10 % on "
          "average over psi (ATM overhead charged, 540/636 ceiling).", _check_slight),
)

SPEC = FigureSpec(
    key="fig19_22", numbers=(19, 20, 21, 22), title="Two sessions, EFFCAP fairness (Figs. 19-22)",
    parts=parts, draw=draw, claims=CLAIMS,
    settings="Physical units: Delta = 240 and 360 ms, buffer 18 packets (9000 B), 500-byte packets, 100 / 50 kB/s, "
             "s = 30 ms, psi = tau / 360 ms, each session fed back half of its estimate, feedback delayed by its "
             "own Delta; Case 1: M = 8, 12, N = 88, 132; Case 2: M = 10, N = 110; TCP alone and INSTCAP as "
             "references; W_max = 128 (CHOICE).")
