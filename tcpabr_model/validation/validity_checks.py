"""Analysis vs simulation at a few points of the validity map (seed 004, Sections III and V).

Each row runs :func:`tcpabr_model.validity.validity_point`: the Markov renewal bounds
``[conservative, optimistic]`` and the cell simulator at the same point, in the
like-with-like *embedded* capacity mode (rate changes at multiples of Delta, INSTCAP over
the last Delta applied at once, TCP alone's pipe scaled to Delta IP packets) or in the
*continuous* mode of the paper's testbed.  The efficiency compared is the simulator's
``efficiency_wire`` (TCP/IP bytes, no cell tax), what the analysis computes.

The quantity checked is the signed point gap of :func:`tcpabr_model.validity.point_gap`
(distance of the simulated mean outside the band over the band's midpoint) on the side
that the row's expectation excludes, against ``k SE / midpoint`` (k = 4, SE from the
replications) plus a stated allowance:

* ``inside``: |gap| <= 4 SE + 2 % (the analysis' idealisations, as in
  ``markov_checks.MODEL_ALLOWANCE``); used where every Section III assumption holds.
* ``not below`` / ``not above``: one-sided, where ``docs/validity.md`` documents why the
  system is on one side of the band (back-to-back arrivals at small psi put the
  simulation above; slow-start and recovery losses of TCP alone put it below).
* ``known gap``: the simulation is below the band by a documented cause (the old window
  still queued in the segmentation buffer after a timeout, W_max = 128); the allowance is
  the measured size of that gap in the full map rounded up, and a second row checks that
  removing the cause (W_max = 48) removes most of the gap.
"""

from __future__ import annotations

from ._report_row import K_SE, Check

MODEL_ALLOWANCE = 0.02
#: docs/validity.md, "old window in the segmentation buffer": W_max = 128, INSTCAP,
#: embedded, Delta 40, B_max 10, psi 50-100 measured 3-5 % below the conservative bound.
SEGMENTATION_BACKLOG_ALLOWANCE = 0.06

# (name, params, expectation, allowance, why)
CASES = [
    ("instcap,embedded,psi=20,B=10,W=48",
     dict(feedback="instcap", mode="embedded", psi=20.0, bmax=10, delta=40.0, wmax=48),
     "inside", MODEL_ALLOWANCE,
     "Section III assumptions hold (psi >> 1, small window): inside the band"),
    ("instcap,embedded,psi=2,B=10,W=48",
     dict(feedback="instcap", mode="embedded", psi=2.0, bmax=10, delta=40.0, wmax=48),
     "not below", 0.0,
     "small psi: back-to-back arrivals overstate loss, the system is at or above the band"),
    ("instcap,embedded,psi=100,B=10,W=128",
     dict(feedback="instcap", mode="embedded", psi=100.0, bmax=10, delta=40.0, wmax=128),
     "known gap", SEGMENTATION_BACKLOG_ALLOWANCE,
     "old window queued in the segmentation buffer after a timeout (W_max 128)"),
    ("none,embedded,psi=20,B=10,W=128",
     dict(feedback="none", mode="embedded", psi=20.0, bmax=10, delta=40.0, wmax=128),
     "not above", 0.0,
     "TCP alone, B_max < (Delta+1)/3: the analysis overestimates (III-B.3, Sec. V-A)"),
]


def _gap_row(name, a, expectation, allowance, why, reps):
    from tcpabr_model.validity import point_gap

    mid = 0.5 * (a["conservative"] + a["optimistic"])
    g = point_gap(a["sim_efficiency"], a["conservative"], a["optimistic"])
    hw = a["sim_half_width"]
    se = hw / 1.96 if hw == hw else 0.0
    tol = allowance + K_SE * se / mid
    if expectation == "inside":
        err, formula = abs(g), "sim in [conservative, optimistic]"
    elif expectation == "not below":
        err, formula = max(0.0, -g), "sim >= conservative"
    elif expectation == "not above":
        err, formula = max(0.0, g), "sim <= optimistic"
    else:  # known gap: below by at most the documented allowance, never above
        err, formula = (max(0.0, -g) if g <= 0 else float("inf")), "known gap: sim below by <= allowance"
    ref = a["optimistic"] if expectation == "not above" else a["conservative"]
    basis = (f"{why}; gap = (sim - nearest bound)/midpoint = {100 * g:+.2f} %; "
             f"tol = {allowance:.0%} + {K_SE:g} SE of {reps} replications")
    return Check(f"validity[{name}]", formula, ref, a["sim_efficiency"], err, tol, basis)


def check_validity_points(quick):
    """Analysis band vs simulation at the points of :data:`CASES` (+ the W_max mechanism row)."""
    from tcpabr_model.validity import validity_point

    reps, dur = (6, 100_000.0) if quick else (20, 400_000.0)
    rows = []
    res = {}
    for i, (name, params, expectation, allowance, why) in enumerate(CASES):
        a = validity_point(params, 101 + i, replications=reps, duration_units=dur, diagnostics=False)
        res[name] = a
        rows.append(_gap_row(name, a, expectation, allowance, why, reps))
    # the mechanism: with W_max = 48 the backlog behind a timeout is small and most of the gap goes
    big = res["instcap,embedded,psi=100,B=10,W=128"]
    small = validity_point(dict(CASES[2][1], wmax=48), 201, replications=reps, duration_units=dur,
                           diagnostics=False)
    from tcpabr_model.validity import point_gap

    g_big = point_gap(big["sim_efficiency"], big["conservative"], big["optimistic"])
    g_small = point_gap(small["sim_efficiency"], small["conservative"], small["optimistic"])
    se = ((big["sim_half_width"] / 1.96) ** 2 + (small["sim_half_width"] / 1.96) ** 2) ** 0.5
    mid = 0.5 * (big["conservative"] + big["optimistic"])
    # remaining share of the W_max = 128 gap at W_max = 48; must be at most one half
    share = g_small / g_big if g_big < 0 else float("inf")
    rows.append(Check("validity[instcap,psi=100: W 128 -> 48]", "gap(W48)/gap(W128) <= 1/2",
                      g_big, g_small, max(0.0, share - 0.5) * abs(g_big), K_SE * se / mid,
                      f"the W_max = 128 gap ({100 * g_big:+.2f} %) must shrink to at most half at W_max = 48 "
                      f"({100 * g_small:+.2f} %): removes the segmentation-buffer backlog; "
                      f"tol {K_SE:g} SE of the difference"))
    return rows
