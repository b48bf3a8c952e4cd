"""Cross-validation checks of the closed forms against independent computations.

Each check returns :class:`Check` rows: the formula, the closed-form value, the
independent value (simulation, exact enumeration or a printed reference value), the
relative error, the tolerance and where the tolerance comes from.  Simulation checks use
``k * SE`` from independent replications (k = 4) plus, where stated, a deterministic
allowance that comes from the formula's own approximation (e.g. an integer window).
:data:`ALL_CHECKS` lists them, then those of ``markov_checks`` and ``validity_checks``, in
the report's order; the row type :class:`Check` lives in ``_report_row``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

import tcpabr_model.closed_forms as cf
from tcpabr_model.stats import jackknife_se

from . import _sims
from ._report_row import K_SE, Check, make_check, relative_error
from .markov_checks import check_markov_embedded_mc, check_markov_vs_cell_sim
from .validity_checks import check_validity_points

__all__ = ["ALL_CHECKS", "Check", "run_all"]


# ---------------------------------------------------------------- effective capacity
def check_two_state_closed_form(quick):
    """Two-state sympy closed form vs the certified spectral radius (arithmetic)."""
    rng = np.random.default_rng(11)
    worst = (0.0, 0.0, 0.0)
    n = 200 if quick else 2000
    for _ in range(n):
        a, b = rng.uniform(0.01, 1.0, 2)
        c0, c1 = rng.uniform(0, 5, 2)
        d = 10 ** rng.uniform(-3, 2)
        closed = cf.effective_capacity_two_state(a, b, c0, c1, d)
        res = cf.effective_capacity_solve(cf.two_state_matrix(a, b), [c0, c1], d)
        e = relative_error(closed, res.value)
        if e >= worst[0]:
            worst = (e, closed, res.value)
    return [make_check("effcap 2-state closed form", "eq.23 sympy 2-state", worst[1], worst[2], 1e-10,
                       f"worst of {n} random cases vs certified Perron root; float64 rounding")]


def _enumerated_log_moment(P, c, pi, delta, n):
    """log E exp(-delta sum_{i=0}^{n} C_i) by enumerating every path of n+1 states."""
    k = len(c)
    # explicit enumeration (no aggregation over prefixes) of all k^(n+1) paths
    paths = np.array(list(itertools.product(range(k), repeat=n + 1)), dtype=np.int64)
    prob = pi[paths[:, 0]].copy()
    for t in range(1, n + 1):
        prob *= P[paths[:, t - 1], paths[:, t]]
    S = c[paths].sum(axis=1)
    m = S.min()
    return -delta * m + math.log(np.sum(prob * np.exp(-delta * (S - m))))


def check_effcap_enumeration(quick):
    """eq. 23 via spectral radius vs brute-force path enumeration (arithmetic)."""
    P = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.1, 0.5]])
    c = np.array([1.0, 0.5, 0.2])
    # stationary distribution by power iteration (independent of the package)
    pi = np.ones(3) / 3
    for _ in range(2000):
        pi = pi @ P
    delta = 1.5
    n = 10 if quick else 12
    l1 = _enumerated_log_moment(P, c, pi, delta, n)
    l0 = _enumerated_log_moment(P, c, pi, delta, n - 1)
    lm = _enumerated_log_moment(P, c, pi, delta, n - 2)
    indep = -(l1 - l0) / delta
    prev = -(l0 - lm) / delta
    closed = cf.effective_capacity(P, c, delta)
    # the increment converges geometrically; the last change bounds the remaining error
    tol = max(2 * abs(indep - prev) / abs(indep), 1e-12)
    return [make_check("effcap vs path enumeration", "eq.23 spectral radius", closed, indep, tol,
                       f"3 states, delta={delta}: increment of log-moment over all 3^{n+1} paths; tol = 2x last change")]


def _simple_cycle_min_mean(P, c):
    n = len(c)
    best = np.inf
    for L in range(1, n + 1):
        for cyc in itertools.permutations(range(n), L):
            if cyc[0] != min(cyc):
                continue
            if all(P[cyc[i], cyc[(i + 1) % L]] > 0 for i in range(L)):
                best = min(best, float(np.mean(c[list(cyc)])))
    return best


def check_effcap_limits(quick):
    rows = []
    rng = np.random.default_rng(5)
    n = 5
    A = rng.random((n, n)) * (rng.random((n, n)) < 0.5)
    np.fill_diagonal(A, 0.0)
    A[np.arange(n), (np.arange(n) + 1) % n] += 0.5  # keep irreducible, no self-loops
    P = A / A.sum(1, keepdims=True)
    c = rng.uniform(0.2, 2.0, n)
    pi = np.ones(n) / n
    for _ in range(5000):
        pi = pi @ P
    mean = float(pi @ c)
    g_small = cf.effective_capacity(P, c, 1e-7)
    rows.append(make_check("effcap delta->0", "Gamma(0+) = E C", g_small, mean, 1e-6,
                           "delta=1e-7: |Gamma - EC| <= delta*Var_asym/2; power-iteration pi"))
    mcm = _simple_cycle_min_mean(P, c)
    rows.append(make_check("effcap delta->inf", "Gamma(inf) = min cycle mean", cf.effective_capacity(P, c, np.inf), mcm, 1e-12,
                           "Karp vs enumeration of all simple cycles (5 states, no self-loops: > c_min)"))
    g_big = cf.effective_capacity(P, c, 200.0)
    pmin = P[P > 0].min()
    rows.append(make_check("effcap delta=200", "Gamma(200) -> min cycle mean", g_big, mcm, -math.log(pmin) / 200 / mcm + 1e-9,
                           "0 <= Gamma(d) - Gamma(inf) <= -log(min P_ij > 0)/d (critical-cycle bound)"))
    return rows


def check_effcap_vs_loss(quick):
    """Decay rate of the measured loss of a constant-rate source vs delta_for_rate (dynamic).

    Eq. (22)-(23): a constant source at gamma = Gamma(delta) into a buffer B loses a
    fraction ~ K exp(-delta B) for large B.  The slope of log(loss) between two buffer
    sizes in the asymptotic range (where the measured local slope has stopped drifting)
    is compared with the delta that the inverse of eq. 23 gives.
    """
    c2 = np.array([1.0, 0.5])
    P3 = np.array([[0.85, 0.1, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]])
    c3 = np.array([1.0, 0.6, 0.3])
    cases = [
        (np.array([[0.9, 0.1], [0.1, 0.9]]), c2, 0.60, (4.0, 10.0)),
        (np.array([[0.9, 0.1], [0.1, 0.9]]), c2, 0.65, (8.0, 16.0)),
        (np.array([[0.95, 0.05], [0.1, 0.9]]), c2, 0.75, (14.0, 22.0)),
        (P3, c3, 0.50, (6.0, 12.0)),
        (P3, c3, 0.55, (8.0, 16.0)),
    ]
    rows = []
    reps = 6 if quick else 12
    n_slots = 10_000_000 if quick else 40_000_000
    for P, c, gamma, (b1, b2) in cases:
        cum = np.cumsum(P, axis=1)
        B = np.array([b1, b2])
        target = cf.delta_for_rate(P, c, gamma)
        lost = np.zeros((reps, 2))
        for r in range(reps):
            _sims.mm_queue_loss(cum, c, gamma, B, n_slots, 1000 + r, lost[r])
        if np.any(lost.sum(0) == 0):
            rows.append(Check(f"effcap vs loss, gamma={gamma}", "loss decay rate", target, float("nan"),
                              float("inf"), 0.0, "no loss observed: run too short"))
            continue
        est = -(math.log(lost[:, 1].sum()) - math.log(lost[:, 0].sum())) / (b2 - b1)
        # jackknife SE of the pooled slope
        jk = []
        for r in range(reps):
            keep = np.arange(reps) != r
            jk.append(-(math.log(lost[keep, 1].sum()) - math.log(lost[keep, 0].sum())) / (b2 - b1))
        se = jackknife_se(jk)
        tol = (K_SE * se + 0.02 * target) / target
        label = f"p01={P[0, 1]}" if len(c) == 2 else f"{len(c)}-state"
        rows.append(make_check(f"effcap vs loss, {label}, g={gamma}", "delta: Gamma(delta)=gamma (eq.22-23)", target, est,
                               tol, f"slope of log loss, B={b1:g}..{b2:g}, {reps}x{n_slots:.0e} slots; "
                                    "4 jackknife SE + 2% pre-asymptotic allowance"))
    return rows


def check_qos_delta(quick):
    eps, bmax = 1e-6, 10.0
    closed = cf.qos_delta(eps, bmax)
    indep = math.log(1 / eps) / bmax
    return [make_check("QoS delta", "delta = -log(eps)/Bmax", closed, indep, 1e-15, "arithmetic")]


# ---------------------------------------------------------------- estimators
def check_estimator_convergence(quick):
    """eq. 25 on a simulated path vs the exact finite-M moment eq. 24 (matrix product)."""
    P = np.array([[0.8, 0.2], [0.3, 0.7]])
    c = np.array([1.0, 0.5])
    cum = np.cumsum(P, axis=1)
    M, delta = 20, 0.5
    n = 2_000_000 if quick else 20_000_000
    x = np.empty(n)
    _sims.markov_path(cum, c, n, 7, x)
    est = cf.effcap_estimate(x, M, delta)
    # exact eq. 24: pi D (P D)^{M-1} 1, independent of the spectral code
    pi = np.array([0.3, 0.2]) / 0.5
    D = np.diag(np.exp(-delta * c))
    v = pi @ D
    for _ in range(M - 1):
        v = v @ P @ D
    exact = -math.log(v.sum()) / (M * delta)
    # SE of the block mean of exp(-delta S) (disjoint blocks ~ weakly dependent), delta method
    S = x[: (n // M) * M].reshape(-1, M).sum(1)
    e = np.exp(-delta * S)
    nb = 50
    bm = e[: (e.size // nb) * nb].reshape(nb, -1).mean(1)
    se = bm.std(ddof=1) / math.sqrt(nb) / e.mean() / (M * delta)
    tol = K_SE * se / exact
    rows = [make_check("eq.25 estimator -> eq.24", "eq.25 (N blocks) vs eq.24 exact", est, exact, tol,
                       f"{n:.0e} samples, M={M}, delta={delta}; 4 SE (batch means)")]
    g = cf.effective_capacity(P, c, delta)
    bias = abs(exact - g) / g
    rows.append(make_check("eq.24 -> eq.23 as M grows", "eq.24 (M=400) vs eq.23", _eq24_exact(P, c, pi, delta, 400), g,
                           2 * bias * 20 / 400 + 1e-12, "bias ~ 1/M: tol = 2 x (bias at M=20) x 20/400"))
    return rows


def _eq24_exact(P, c, pi, delta, M):
    D = np.diag(np.exp(-delta * c))
    v = pi @ D
    logs = 0.0
    for _ in range(M - 1):
        v = v @ P @ D
        s = v.sum()
        logs += math.log(s)
        v = v / s
    return -(logs + math.log(v.sum())) / (M * delta)


def check_eq28(quick):
    rng = np.random.default_rng(3)
    x = rng.choice([1.0, 0.5], size=5000)
    M, N = 7, 49
    # naive loops
    avgs = [sum(x[len(x) - M - j: len(x) - j]) / M for j in range(N)]
    naive = min(avgs)
    rows = [make_check("EFFCAP eq.28", "min of N sliding M-averages", cf.effcap_min_block_average(x, M, N), naive, 1e-12,
                       "naive Python loop")]
    ser = cf.effcap_feedback_series(x, M, N)
    rows.append(make_check("EFFCAP series", "rolling eq.28 (numba deque)", ser[-1], naive, 1e-12, "naive Python loop"))
    # eq. 25 -> eq. 28 bound
    d = 1e3
    e25 = cf.effcap_estimate(x, M, d, N, sliding=True)
    rows.append(make_check("eq.25 -> eq.28 (delta=1e3)", "0 <= eq25 - eq28 <= log N/(M delta)", e25, naive,
                           math.log(N) / (M * d) / naive + 1e-12,
                           "bound of eq. 27 (attained when a single block is the minimum, as here)"))
    return rows


def check_effcap_design(quick):
    cases = [((200, 30, 8), (7, 49)), ((240, 30, 12), (8, 88)), ((360, 30, 12), (12, 132)),
             ((300, 30, 12), (10, 110)), ((200, 30, 2), (7, 7)), ((50, 30, 4), (2, 6)), ((100, 30, 4), (4, 12))]
    bad = 0
    for (d, s, k), (M, N) in cases:
        got = cf.effcap_design(d, s, k)
        bad += int((got.M, got.N) != (M, N))
    return [make_check("EFFCAP design rule", "M = ceil(D/s), N = (k-1) M", bad, 0, 0.0,
                       f"{len(cases)} worked examples of seed 004 (Secs. V-VII); value = number of mismatches",
                       rel=float(bad))]


# ---------------------------------------------------------------- window formulas
def check_eq1_reference(quick):
    rows = []
    for w, printed in ((91232, 24.32), (181952, 48.5), (363392, 96.9)):
        v = cf.throughput_from_window(w, 0.030)
        digits = 0.01 if printed == 24.32 else 0.1
        rows.append(make_check(f"seed 002 eq.1, CWND={w}", "8e-6 CWND/RTT", v, printed, (digits) / printed,
                               "printed value, RTT 30 ms; tol = one unit of its last digit (24.3285 is printed 24.32)"))
    return rows


def check_eq2_closed_form(quick):
    d = cf.derive_eq2_closed_form()
    worst = 0.0
    for W, mss, b in ((64, 1, 1), (100, 1, 2), (125000, 1024, 1), (250000, 512, 2), (48, 2, 1)):
        T = Fraction(b * W, 2 * mss)
        if T.denominator != 1:
            continue
        T = int(T)
        exact = sum(Fraction(W, 2) + Fraction(mss, b) * i for i in range(1, T + 1)) / T
        s = d["symbols"]
        val = d["sum"].subs({s["W"]: W, s["MSS"]: mss, s["T"]: T, s["b"]: b})
        worst = max(worst, abs(float(val) - float(exact)) / float(exact))
        worst = max(worst, abs(cf.average_window_linear(W, mss, acks_per_increment=b) - float(exact)) / float(exact))
    return [make_check("seed 002 eq.2 closed form", "sum -> 3/4 W + MSS/(2b)", worst, 0.0, 1e-15,
                       "exact rational summation (Fraction); value = worst relative error", rel=worst)]


def check_window_sim(quick):
    rows = []
    n = 1_000_000 if quick else 10_000_000
    out = np.zeros(6)
    for W, d in ((32, 40), (64, 100)):
        _sims.ca_sawtooth_flow(W, d, n, out)
        sw, acked, sinf, srtt, nrtt, T = out
        goodput = acked / T
        w_eff = sinf / T
        rtt = srtt / nrtt
        # eq. 1 (packets instead of bytes): throughput = window / RTT
        rows.append(make_check(f"eq.1 vs sim goodput W={W}", "avg window / avg RTT", w_eff / rtt, goodput, 2e-3,
                               "Little's law; tol = 2 packets per run / packets acked (edge effects) + rounding"))
        rows.append(make_check(f"sawtooth avg cwnd W={W}", "3/4 W (fluid CA sawtooth)", cf.sawtooth_average_window(W), sw / T,
                               1.0 / (0.75 * W), "cwnd is an integer window: 1 segment allowance"))
        rows.append(make_check(f"eq.2 vs sim in-flight W={W}", "3/4 W + MSS/2", cf.average_window_linear(W, 1), w_eff,
                               1.0 / (0.75 * W), "per-RTT granularity of eq. 2: 1 segment allowance"))
        rows.append(make_check(f"sawtooth throughput W={W}", "3W/(4 RTT)", cf.sawtooth_throughput(W, d), goodput,
                               1.0 / (0.75 * W), "1 segment per RTT allowance (integer window)"))
    return rows


def check_fifo_sim(quick):
    w = np.array([10, 20, 30, 40], np.int64)
    reps = 4
    n = 500_000 if quick else 5_000_000
    shares = []
    xs = []
    for r in range(reps):
        dep = np.zeros(w.size, np.int64)
        occ = np.zeros(w.size)
        _sims.fifo_window_flows(w, 50, 0.8, n, 100 + r, dep, occ)
        shares.append(dep / dep.sum())
        xs.append(occ)
    shares = np.array(shares)
    mu_total = 1.0
    x = np.mean(xs, axis=0)
    pred = cf.fifo_share(mu_total, x)
    est = shares.mean(0)
    se = shares.std(0, ddof=1) / math.sqrt(reps)
    i = int(np.argmax(np.abs(pred - est) / est))
    tol = (K_SE * se[i] + 1.0 / (n * 0.8 / w.sum())) / est[i]
    return [make_check("FIFO share rule", "mu_i = mu x_i / x", pred[i], est[i], tol,
                       f"4 window flows, random link; worst flow; 4 SE over {reps} runs + 1 cycle")]


# ---------------------------------------------------------------- ATM, fairness, efficiency
def _cells_by_enumeration(mss, hdr=40, llc=8, trailer=8):
    pdu = bytearray(llc + hdr + mss)  # LLC/SNAP + IP + TCP + data
    cells = 0
    while True:  # add pad bytes until the trailer ends exactly on a cell boundary
        if (len(pdu) + trailer) % 48 == 0:
            break
        pdu.append(0)
    pdu.extend(bytes(trailer))
    for start in range(0, len(pdu), 48):
        cells += 1
    return cells


def check_atm(quick):
    rows = []
    mismatches = 0
    top = 2000 if quick else 9180
    for mss in range(1, top + 1):
        mismatches += int(cf.cells_per_packet(mss) != _cells_by_enumeration(mss))
    rows.append(make_check("AAL5 cells per packet", "ceil((mss+56)/48)", mismatches, 0, 0.0,
                           f"byte-level PDU build for mss=1..{top}; value = mismatches", rel=float(mismatches)))
    rows.append(make_check("seed 000 TCP max (512 B)", "155.52 x 512/(53*12)", cf.tcp_max_throughput(155.52, 512), 125.2,
                           0.05 / 125.2, "printed 125.2 Mbps (no SONET); half a unit of the last digit"))
    rows.append(make_check("seed 000 efficiency (512 B)", "512/636", cf.tcp_efficiency(512), 0.805, 0.0005 / 0.805,
                           "printed 80.5%"))
    rows.append(make_check("seed 000 with 50% VBR", "0.5 x TCP max", 0.5 * cf.tcp_max_throughput(155.52, 512), 63.0,
                           0.5 / 63.0, "printed 'about 63 Mbps'"))
    rows.append(make_check("seed 002 TCP max (1024 B)", "149.76 x 1024/(53*23)", cf.tcp_max_throughput(155.52, 1024, sonet=True),
                           126.0, 0.5 / 126.0, "printed '126 Mbps' (SONET framing); half a unit"))
    rows.append(make_check("seed 004 ATM overhead", "48/53", cf.atm_cell_efficiency(), 0.90, 0.01 / 0.9,
                           "printed 'approximately 90%'"))
    return rows


def check_fairness(quick):
    rng = np.random.default_rng(9)
    worst = 0.0
    n_cases = 300 if quick else 3000
    bounds_ok = True
    for _ in range(n_cases):
        n = int(rng.integers(1, 12))
        x = rng.integers(0, 1000, n)
        if x.sum() == 0:
            continue
        exact = Fraction(int(x.sum()) ** 2, n * int((x * x).sum()))
        j = cf.jain_index(x)
        worst = max(worst, abs(j - float(exact)) / float(exact))
        bounds_ok &= (1.0 / n - 1e-12 <= j <= 1.0 + 1e-12)
    rows = [make_check("Jain fairness index", "(sum x)^2/(n sum x^2)", worst, 0.0, 1e-14,
                       f"{n_cases} integer cases in exact rationals; value = worst rel. error", rel=worst)]
    rows.append(make_check("Jain index bounds", "1/n <= J <= 1", float(bounds_ok), 1.0, 0.0, "all cases"))
    x = np.array([10.0, 20.0, 30.0])
    cv2 = x.var() / x.mean() ** 2
    rows.append(make_check("Jain = 1/(1+CV^2)", "identity", cf.jain_index(x), 1 / (1 + cv2), 1e-14, "population CV"))
    g = np.array([8.1, 7.9, 8.3, 7.7])
    rows.append(make_check("seed 001 efficiency", "sum g_i", cf.efficiency_seed001(g), float(sum(Fraction(str(v)) for v in g)),
                           1e-15, "exact decimal sum"))
    rows.append(make_check("seed 004 efficiency", "thr / mean capacity", cf.efficiency_seed004(0.6, 0.75), 0.8, 1e-15,
                           "0.6/0.75"))
    rows.append(make_check("seed 000 efficiency", "sum x / TCP max", cf.efficiency_seed000([25.0, 25.0, 25.0, 25.0, 25.2], 125.2),
                           1.0, 1e-15, "sums to the 125.2 maximum"))
    return rows


ALL_CHECKS = [
    check_two_state_closed_form,
    check_effcap_enumeration,
    check_effcap_limits,
    check_qos_delta,
    check_effcap_vs_loss,
    check_estimator_convergence,
    check_eq28,
    check_effcap_design,
    check_eq1_reference,
    check_eq2_closed_form,
    check_window_sim,
    check_fifo_sim,
    check_atm,
    check_fairness,
    check_markov_embedded_mc,
    check_markov_vs_cell_sim,
    check_validity_points,
]


def run_all(quick=True):
    rows = []
    for fn in ALL_CHECKS:
        rows.extend(fn(quick))
    return rows
