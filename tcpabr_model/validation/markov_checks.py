"""Cross-validation of the Markov renewal engine (seed 004, Section III).

Two independent computations:

* the Monte Carlo of the same Markov renewal process (``simulate_embedded``), which
  samples the model's definitions and never reads the transition matrix: it must agree
  with the solved bounds within its confidence interval;
* the cell-level simulator in *embedded* capacity mode (rate changes only at multiples
  of Delta, INSTCAP fed back with delay Delta, like the analysis).  The analysis is a
  pair of bounds built on idealisations (back-to-back packets, recovery exactly three
  round trips after the loss, no loss in slow start), so the check is that the simulated
  efficiency lies in [conservative, optimistic] up to 4 standard errors plus a stated 2 %
  allowance.  The window is limited to 48 packets: with a larger window the old window
  still queued in the segmentation buffer delays recovery after a timeout, which the
  analysis (regeneration at (0, 0, m)) ignores -- measured 3 % below the conservative
  bound at W_max = 128, psi = 100 (issue note).  The like-with-like scenario is
  ``tcpabr_model.validity.embedded_sim_scenario`` (for TCP alone it scales the delay so
  that the pipe holds Delta IP packets, as in the analysis).  For TCP alone the paper states that the
  analysis overestimates (assumption III-B.3 fails for B_max < (Delta + 1)/3): the check is
  that the simulation does not exceed the optimistic bound.  The constant-rate source of
  Section IV (``feedback='constant'``), whose throughputs the delta calibration optimises,
  is checked the same way.
"""

from __future__ import annotations

from ._report_row import K_SE, Check, make_check

MODEL_ALLOWANCE = 0.02


def check_markov_embedded_mc(quick):
    from tcpabr_model.markov import Scenario, analyze, simulate_embedded

    rows = []
    n = 150_000 if quick else 1_500_000
    for fb, psi in (("instcap", 3.0), ("none", 8.0)):
        sc = Scenario(delta=40, bmax=10, psi=psi, feedback=fb)
        r = analyze(sc)
        mc = simulate_embedded(sc, n_cycles=n, seed=5)
        for key, val, est, hw in (("eq18", r.optimistic_eq18, mc.optimistic_eq18, mc.optimistic_eq18_halfwidth),
                                  ("conservative", r.conservative, mc.conservative, mc.conservative_halfwidth)):
            se = hw / 1.96
            rows.append(make_check(f"markov_vs_embedded_mc[{fb},{key}]",
                                   f"E V/E U eqs.14-21, psi={psi:g}", val, est, K_SE * se / est,
                                   f"{K_SE:g} SE of {mc.n_batches} batch means over {n} cycles"))
    return rows


def check_markov_vs_cell_sim(quick):
    from tcpabr_model.markov import Scenario as MScenario, analyze
    from tcpabr_model.sim import simulate
    from tcpabr_model.validity import embedded_sim_scenario

    rows = []
    reps = 6 if quick else 20
    # (feedback, psi, constant source rate): 'constant' is the Section IV source that the
    # delta calibration (tcpabr_model.closed_forms.calibration) optimises over
    cases = ([("instcap", 50.0, None), ("none", 50.0, None), ("constant", 50.0, 0.7)] if quick else
             [("instcap", 20.0, None), ("instcap", 50.0, None), ("instcap", 100.0, None),
              ("none", 20.0, None), ("none", 50.0, None), ("constant", 5.0, 0.6), ("constant", 5.0, 0.7),
              ("constant", 50.0, 0.6), ("constant", 50.0, 0.7)])
    for fb, psi, mu in cases:
        a = analyze(MScenario(delta=40, bmax=10, psi=psi, wmax=48, feedback=fb, source_rate=mu))
        sc = embedded_sim_scenario(delta=40, bmax=10, psi=psi, wmax=48, feedback=fb, source_rate=mu)
        res = simulate(sc, replications=reps, seed=3)
        est = res.efficiency_wire.mean
        se = res.efficiency_wire.half_width / 1.96 if res.efficiency_wire.half_width else 0.0
        if fb != "none":
            tag = f"{fb},psi={psi:g}" + (f",mu={mu:g}" if mu is not None else "")
            outside = max(0.0, a.conservative - est, est - a.optimistic) / a.conservative
            rows.append(Check(f"markov_vs_cell_sim[{tag}]",
                              "sim in [conservative, optimistic]", a.conservative, est, outside,
                              MODEL_ALLOWANCE + K_SE * se / est,
                              f"distance outside the bounds; {K_SE:g} SE of {reps} replications "
                              f"+ {MODEL_ALLOWANCE:.0%} for the analysis' idealisations"))
        else:
            above = max(0.0, est - a.optimistic) / a.optimistic
            rows.append(Check(f"markov_vs_cell_sim[{fb},psi={psi:g}]",
                              "TCP alone: sim <= optimistic", a.optimistic, est, above,
                              K_SE * se / est, f"excess over the optimistic bound; {K_SE:g} SE of {reps} replications"))
    return rows
