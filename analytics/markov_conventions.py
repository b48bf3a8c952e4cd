"""Effect of the two Markov-engine conventions of issue 16 against the cell-level simulator.

For a few small pipes where a convention moves the bounds by more than 0.01, prints the
analysis band under each convention (docs/model.md sec. 3: ``bmax_counts_service``,
``ack_clock``) and the simulator's efficiency (``efficiency_wire``, embedded mode: rate
changes at multiples of Delta, INSTCAP measured over the last Delta; 6 x 200000 time
units, 95 % CI).  The table in docs/validity.md ("Conventions") comes from this script.

    python analytics/markov_conventions.py
"""

from __future__ import annotations

from tcpabr_model.markov import Scenario, analyze
from tcpabr_model.validity import validity_point

POINTS = [
    # (feedback, delta, bmax, wmax, psi, option, alternative value)
    ("instcap", 10, 4, 32, 2.0, "bmax_counts_service", False),
    ("instcap", 8, 4, 16, 2.0, "bmax_counts_service", False),
    ("instcap", 40, 10, 128, 2.0, "bmax_counts_service", False),
    ("none", 10, 4, 32, 20.0, "ack_clock", "after-service"),
    ("none", 40, 10, 128, 20.0, "ack_clock", "after-service"),
]


def main() -> None:
    print("| feedback | Delta | B_max | W_max | psi | option | default band [cons, opt] (eq. 18) | "
          "alternative band (eq. 18) | simulator (95 % CI) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fb, delta, bmax, wmax, psi, opt, alt in POINTS:
        base = dict(delta=delta, bmax=bmax, wmax=wmax, psi=psi, feedback=fb)
        a = analyze(Scenario(**base))
        b = analyze(Scenario(**base, **{opt: alt}))
        v = validity_point(dict(base, mode="embedded"), seed=16, diagnostics=False)
        print(f"| {fb} | {delta} | {bmax} | {wmax} | {psi:g} | {opt}={alt!r} | "
              f"[{a.conservative:.3f}, {a.optimistic:.3f}] ({a.optimistic_eq18:.3f}) | "
              f"[{b.conservative:.3f}, {b.optimistic:.3f}] ({b.optimistic_eq18:.3f}) | "
              f"{v['sim_efficiency']:.3f} ± {v['sim_half_width']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
