"""INSTCAP's backlog from psi 20 up: the chain against the simulator by level, window, rate drop
and growth (docs/validity.md, "What is left, by place", first item; issue 26).

    python analytics/instcap_backlog.py [--psi 20] [--delta 40] [--bmax 10] [--units 1e6] [--seed 3]

Solves the chain of TCP (timeout-only) over INSTCAP on the paper's two-state link (``W_max`` 128)
and simulates the same point in the embedded mode (one replication), and compares, per capacity
level, at the epochs (the capacity's change times, every Delta):

* the segmentation buffer ``A`` and the window in congestion avoidance (the simulator's epochs with
  ``cwnd >= ssthresh`` outside the stretch from one interval before the first full bottleneck to
  the timeout; the chain's stationary law at its epochs, whose loss cycles have no epochs);
* ``A`` given the window, in windows of 10 packets;
* the losses at a drop of the rate by the window at the drop (the simulator: its bottleneck full in
  the interval after the drop; the chain: ``p_loss`` of its states with ``R`` low and ``S`` high);
* the same below the pipe in windows of 5 packets, beside a periodic train with a uniform phase
  (:func:`periodic_train_loss`);
* the window's growth per epoch of congestion avoidance without a loss or a change of level (the
  chain: ``E[W' - W | x]`` from its transition matrix).

**Diagnostic, flagged:** the simulator's fast path records its trace every measurement interval
(here Delta); this script sets its sampling to one time unit (``G_SAMPLE``, by wrapping
``sim.driver.fast_path_inputs``), and reads only the trace's buffers, window, ``ssthresh`` and
capacity. Writes the tables as CSV to ``out/instcap_backlog/`` and prints them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "analytics"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import tcpabr_model.sim.driver as driver  # noqa: E402
from tcpabr_model.markov import Scenario, skeleton_for  # noqa: E402
from tcpabr_model.markov.solvers import stationary_distribution  # noqa: E402
from tcpabr_model.runtime.atomic import write_table  # noqa: E402
from tcpabr_model.sim import simulate  # noqa: E402
from tcpabr_model.sim.arrays import layout as L  # noqa: E402
from tcpabr_model.validity import embedded_sim_scenario  # noqa: E402
from traces_fit import md_table  # noqa: E402

WMAX = 128
BINS = (0, 20, 30, 40, 50, 60, 70, 80, 100, 130)


def sampled_trace(psi: float, delta: int, bmax: int, units: float, seed: int) -> dict:
    """One replication with its trace sampled every time unit: per sample the segmentation buffer
    and the bottleneck queue (packets: cells over the cells of a frame), ``cwnd``, ``ssthresh`` and
    the capacity level (0 high, 1 low)."""
    sc = embedded_sim_scenario(delta=delta, bmax=bmax, psi=psi, wmax=WMAX, feedback="instcap",
                               duration_units=units)
    every = int(round(sc.time_unit / sc.slot_seconds))
    plain = driver.fast_path_inputs

    def every_unit(net, kin, sample=None):
        args = plain(net, kin, sample=sample)
        if args is not None:
            args[0][L.G_SAMPLE] = every
        return args

    driver.fast_path_inputs = every_unit
    try:
        r = simulate(sc, replications=1, seed=seed, trace=True)
    finally:
        driver.fast_path_inputs = plain
    t = r.trace
    upf = sc.cells_per_frame
    first = lambda x: np.asarray(x, float).reshape(len(x), -1)[:, 0]   # noqa: E731  (connection 0)
    return {"a": first(t.segmentation_cells) / upf, "q": first(t.queue) / upf, "cwnd": first(t.cwnd),
            "ssthresh": first(t.ssthresh), "cap": np.asarray(t.capacity, float),
            "time": np.asarray(t.time) / sc.time_unit,
            "warmup": sc.warmup / sc.time_unit,
            "mean_source_frames": float(r.delay.to_dict()["occupancy"]["source_frames"]["mean"])}


def periodic_train_loss(w: float, delta: float, bmax: float, rate_ratio: float, n: int = 2000) -> float:
    """P(loss) at a drop of the rate for a window ``w`` below the pipe ``delta`` sent as a periodic
    train (``w`` packets one time unit apart every ``delta``) whose phase against the drop is uniform:
    the interval after the drop receives the tail of one train (``L1`` packets) and the head of the
    next (``w - L1``), the gap ``delta - w`` between them served at the low rate ``rate_ratio``; a loss
    when the queue passes ``bmax`` (empty at the drop). The chain's at-epoch sends are ``L1 = 0``."""
    w = float(np.floor(w))
    if w >= delta:
        return 1.0
    rise = 1.0 - rate_ratio
    l1 = (np.arange(n) + 0.5) * w / n
    first = l1 * rise
    second = np.maximum(first - (delta - w) * rate_ratio, 0.0) + (w - l1) * rise
    return float(np.mean((first > bmax) | (second > bmax)))


def epochs_of(tr: dict, delta: int, skip: int) -> np.ndarray:
    """The samples at the capacity's change times (the chain's epochs), after ``skip`` samples."""
    changes = np.flatnonzero(np.diff(tr["cap"])) + 1
    phase = int(changes[0] % delta) if changes.size else 0
    ep = np.arange(phase, len(tr["cap"]) - 3 * delta, delta)
    return ep[ep > skip]


def compare(psi: float, delta: int, bmax: int, units: float, seed: int) -> dict:
    """The four tables of the module docstring, as DataFrames."""
    sc = Scenario(delta=delta, bmax=bmax, psi=psi, wmax=WMAX, feedback="instcap")
    sk = skeleton_for(sc)
    Q = sc.rate_matrix
    pi = stationary_distribution(sk, Q).pi
    st, win, p = sk.states, sk.window.astype(float), sk.p_loss
    growth = sk.transition_matrix(Q) @ win - win

    tr = sampled_trace(psi, delta, bmax, units, seed)
    a, q, cw, ss, cap = tr["a"], tr["q"], np.minimum(tr["cwnd"], WMAX), tr["ssthresh"], tr["cap"]
    skip = int(np.searchsorted(tr["time"], tr["warmup"]))     # the simulator's warm-up is not measured
    ep = epochs_of(tr, delta, skip)
    full = q >= q.max() - 0.6
    timeouts = np.flatnonzero((tr["cwnd"][1:] <= 1.01) & (tr["cwnd"][:-1] > 1.01)) + 1
    timeouts = timeouts[timeouts >= skip]
    lossy = np.zeros(len(a), bool)          # from one interval before the first full bottleneck to the timeout
    for k in timeouts[timeouts > 300]:
        f = np.flatnonzero(full[k - 300:k])
        if f.size:
            lossy[max(k - 300 + f[0] - delta, 0):k] = True
    ca = (tr["cwnd"] >= ss - 0.01) & ~lossy
    ca_ep = ep[ca[ep]]

    levels, cond, drops, grow = [], [], [], []
    for r in (0, 1):
        m = st[:, 3] == r
        pr = pi[m] / pi[m].sum()
        e = ca_ep[cap[ca_ep] == r]
        levels.append({"level": ("high", "low")[r], "chain_epoch_share": float(pi[m].sum()),
                       "chain_A": float(pr @ st[m, 0]), "chain_W": float(pr @ win[m]),
                       "sim_ca_epoch_share": float(e.size / max(ca_ep.size, 1)),
                       "sim_A": float(a[e].mean()), "sim_W": float(cw[e].mean()), "sim_epochs": int(e.size)})
        for lo, hi in zip(BINS[:-1], BINS[1:]):
            cm = m & (win >= lo) & (win < hi)
            sm = e[(cw[e] >= lo) & (cw[e] < hi)]
            cond.append({"level": ("high", "low")[r], "W_from": lo, "W_to": hi,
                         "chain_share": float(pi[cm].sum() / pi[m].sum()),
                         "chain_A": float(pi[cm] @ st[cm, 0] / pi[cm].sum()) if pi[cm].sum() > 0 else np.nan,
                         "sim_share": float(sm.size / max(e.size, 1)),
                         "sim_A": float(a[sm].mean()) if sm.size else np.nan})
            gm = cm & (p == 0)
            ge = ep[ca[ep] & (cap[ep] == r) & (cap[np.minimum(ep + delta - 1, len(cap) - 1)] == r)
                    & (tr["cwnd"][np.minimum(ep + delta, len(cap) - 1)] >= tr["cwnd"][ep] - 0.01)]
            ge = ge[(cw[ge] >= lo) & (cw[ge] < hi)]
            grow.append({"level": ("high", "low")[r], "W_from": lo, "W_to": hi,
                         "chain_growth": float(pi[gm] @ growth[gm] / pi[gm].sum()) if pi[gm].sum() > 0 else np.nan,
                         "sim_growth": float((tr["cwnd"][ge + delta] - tr["cwnd"][ge]).mean()) if ge.size else np.nan,
                         "sim_epochs": int(ge.size)})
    sw = (st[:, 3] == 1) & (st[:, 4] == 0)      # the interval after a drop: R low, S still high
    at = ep[(cap[ep] == 1) & (cap[ep - 1] == 0)]
    lost = np.array([full[e:e + delta].any() for e in at])
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        cm = sw & (win >= lo) & (win < hi)
        w_at = cw[at - 1]
        sm = (w_at >= lo) & (w_at < hi)
        smca = sm & (tr["cwnd"][at - 1] >= ss[at - 1] - 0.01)
        drops.append({"W_from": lo, "W_to": hi,
                      "chain_p_loss": float(pi[cm] @ p[cm] / pi[cm].sum()) if pi[cm].sum() > 0 else np.nan,
                      "chain_share": float(pi[cm].sum() / pi[sw].sum()),
                      "sim_p_loss": float(lost[sm].mean()) if sm.any() else np.nan,
                      "sim_share": float(sm.mean()), "sim_drops": int(sm.sum()),
                      "sim_ca_p_loss": float(lost[smca].mean()) if smca.any() else np.nan,
                      "sim_ca_drops": int(smca.sum())})
    phase = []
    w_at = cw[at - 1]
    in_ca = tr["cwnd"][at - 1] >= ss[at - 1] - 0.01
    for lo in range(15, 40, 5):
        sm = in_ca & (w_at >= lo) & (w_at < lo + 5)
        cm = sw & (win >= lo) & (win < lo + 5)
        phase.append({"W_from": lo, "W_to": lo + 5, "sim_ca_drops": int(sm.sum()),
                      "sim_ca_p_loss": float(lost[sm].mean()) if sm.any() else np.nan,
                      "periodic_train_p_loss": float(np.mean([periodic_train_loss(x, delta, bmax, sc.rate_ratio)
                                                              for x in w_at[sm]])) if sm.any() else np.nan,
                      "chain_p_loss": float(pi[cm] @ p[cm] / pi[cm].sum()) if pi[cm].sum() > 0 else np.nan})
    summary = {"chain_p_loss_per_drop": float(pi[sw] @ p[sw] / pi[sw].sum()),
               "sim_p_loss_per_drop": float(lost.mean()), "sim_drops": int(lost.size),
               "sim_timeouts": int(timeouts.size),
               "sim_units_per_timeout": float((len(a) - skip) / max(timeouts[timeouts >= skip].size, 1))}
    return {"levels": pd.DataFrame(levels), "a_given_w": pd.DataFrame(cond), "drops": pd.DataFrame(drops),
            "drops_phase": pd.DataFrame(phase),
            "growth": pd.DataFrame(grow), "summary": pd.DataFrame([summary])}


def _fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--psi", type=float, default=20.0)
    ap.add_argument("--delta", type=int, default=40)
    ap.add_argument("--bmax", type=int, default=10)
    ap.add_argument("--units", type=float, default=1e6, help="simulated time units (default 1e6)")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "instcap_backlog")
    args = ap.parse_args(argv)
    res = compare(args.psi, args.delta, args.bmax, args.units, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, df in res.items():
        write_table(df, args.out / f"{name}.csv")
        print(f"\n### {name}\n")
        print(md_table(list(df.columns), [[_fmt(v) for v in row] for row in df.itertuples(index=False)]))
    print(f"\nwritten to {args.out}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
