"""Links with long outages: the Markov analysis against the trace replay (docs/model.md sec. 15c).

Makes four synthetic Mahimahi traces of 600 s at a 100-ms round trip, seeded:

* ``two_2``, ``two_10``, ``two_70``: 12 packets per 100-ms epoch evenly spread, or nothing, the
  epochs following a two-state Markov chain with 27 % of them in outages of mean 2, 10 and 70
  epochs;
* ``evdo``: an EVDO-like link, 60-200 packets/s (Poisson, the rate drawn per regime of mean
  3 s) with outages of 1-12 s starting before 15 % of the regimes (27 % of the epochs);

and, per trace and feedback (TCP alone, INSTCAP), prints ``tcpabr analyze --trace``'s prediction
and band (the chain fitted at epoch = RTT, its defaults: timer cycle, ACK counter, 8 patterns
per level) beside the simulator's efficiency replaying the same trace (in sample, as
``tcpabr simulate --capacity-trace``; the trace study's simulation, ``--replications`` x 2000 s
after 10 s of warm-up, seed 0), both for ``--rtt 0.1 --bmax 10`` and the same window.  A script: it
measures, never asserts.

    python analytics/outage_links.py [--out DIR] [--replications 4] [--duplicates go-back-n]

``--duplicates go-back-n``: the analysis with go-back-N's copies off its credits (docs/model.md sec. 15d).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RTT, BMAX, PERIOD_MS = 0.1, 10, 600_000


def two_level(mean_outage: float, seed: int = 3, share: float = 0.27) -> list[int]:
    """Opportunity times (ms) of the two-level link: 12 per epoch of 100 ms or none."""
    p_leave = 1.0 / mean_outage
    p_enter = p_leave * share / (1.0 - share)
    rng = np.random.default_rng(seed)
    serving = rng.random() > share
    out = []
    for k in range(PERIOD_MS // 100):
        if serving:
            out += [k * 100 + int(100 * (i + 1) / 12) for i in range(12)]
            serving = rng.random() >= p_enter
        else:
            serving = rng.random() < p_leave
    if out[-1] < PERIOD_MS:
        out.append(PERIOD_MS)
    return out


def evdo_like(seed: int = 7) -> list[int]:
    """Opportunity times (ms) of the EVDO-like link (module docstring)."""
    rng = np.random.default_rng(seed)
    t, out = 0.0, []
    while t < PERIOD_MS:
        if rng.random() < 0.15:
            t += rng.uniform(1000, 12000)
            continue
        end = min(PERIOD_MS, t + rng.exponential(3000))
        rate = rng.uniform(60, 200) / 1000.0
        out += list(np.sort(rng.uniform(t, end, rng.poisson(rate * (end - t)))).astype(int) + 1)
        t = end
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "out" / "outage_links"))
    ap.add_argument("--replications", type=int, default=4)
    ap.add_argument("--duplicates", choices=("none", "go-back-n"), default="none",
                    help="the analysis' go-back-N copies (docs/model.md sec. 15d; default none)")
    args = ap.parse_args(argv)
    from tcpabr_model.capacity import read_trace
    from tcpabr_model.trace_study import _simulation, analyze_link, fit_link, window_packets

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    links = {"two_2": two_level(2), "two_10": two_level(10), "two_70": two_level(70), "evdo": evdo_like()}
    print("| link | feedback | simulator (replay) | analysis: prediction [band] | error |")
    print("|---|---|---|---|---|")
    for name, times in links.items():
        path = out / f"{name}.down"
        path.write_text("\n".join(map(str, times)) + "\n")
        trace = read_trace(str(path))
        link = fit_link(trace, RTT)
        for fb in ("none", "instcap"):
            wmax = window_packets(float(np.max(link.model.levels)), RTT, BMAX)
            a = analyze_link(link, BMAX, fb, wmax=wmax, duplicates=args.duplicates)
            e = _simulation(trace, RTT, BMAX, wmax, fb, args.replications, 2000.0, 0, 1).efficiency_wire
            print(f"| {name} | {'TCP alone' if fb == 'none' else 'INSTCAP'} | {e.mean:.3f} +/- {e.half_width:.3f} | "
                  f"{a.prediction:.3f} [{a.conservative:.3f}, {a.optimistic:.3f}] | "
                  f"{100 * (a.prediction - e.mean) / e.mean:+.1f} % |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
