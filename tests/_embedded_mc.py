"""The check the engine's tests share: the chain against the embedded Monte Carlo of the same
process (``simulate_embedded`` samples the intervals with its own replay and never reads the matrix)."""

from __future__ import annotations

from tcpabr_model.markov import Scenario, analyze, simulate_embedded


def assert_agrees_with_embedded_mc(sc: Scenario, n_cycles: int, seed: int, halfwidths: float = 4.0) -> None:
    """The uncapped optimistic (eq. 18) and the conservative rewards within ``halfwidths`` of the
    Monte Carlo's 95 % half-widths."""
    r = analyze(sc)
    mc = simulate_embedded(sc, n_cycles=n_cycles, seed=seed)
    assert abs(mc.optimistic_eq18 - r.optimistic_eq18) < halfwidths * mc.optimistic_eq18_halfwidth
    assert abs(mc.conservative - r.conservative) < halfwidths * mc.conservative_halfwidth
