"""The paper's question on measured links (issue 15 item 6): analysis on the fitted chain,
simulation on the fitted chain, and simulation replaying the trace itself.

For each Mahimahi trace (default: the three shared cellular traces in ``../shared/traces``;
``--traces FILE ...`` for your own), each round trip (``--rtts``, default 20, 50, 100 ms) and
each buffer (``--buffers``, in mean bandwidth-delay products, default 0.5 and 2), and each of
TCP alone, TCP over INSTCAP and TCP over EFFCAP:

1. **fit**: ``capacity.fit_trace(trace, epoch=RTT)`` -- a K-level chain embedded at the round
   trip, the epoch of the analysis (seed 004 Sec. III-B, assumption 1); K chosen by the
   effective-capacity criterion (docs/traces.md);
2. **analysis**: the K-state Markov renewal bounds (``markov.analyze``) on that chain,
   ``[conservative, optimistic]``; for TCP alone and INSTCAP (EFFCAP has no Markov model:
   its rate is a moving minimum of averages, not a function of the embedded state);
3. **sim fitted**: the cell simulator driven by the fitted chain;
4. **sim trace**: the cell simulator replaying the trace itself (random start per
   replication, repeated as Mahimahi does).

Units: one packet is one Mahimahi opportunity (1500 bytes: a 1460-byte segment with its 40
bytes of TCP/IP headers).  Efficiency is throughput / mean available capacity; for the
simulations over ATM it is ``efficiency_wire`` (frames counted whole on the wire, so the
cell tax 1500/1696 is not charged), which is the analysis' definition (whole packets over
the capacity in packets).  The relative error of the fitted model is
``(x_fitted - x_trace) / x_trace`` per point.

Usage::

    python analytics/traces.py [--quick] [--traces FILE ...] [--rtts 0.02,0.05,0.1]
        [--buffers 0.5,2] [--replications 5] [--duration S] [--workers 2] [--out DIR]

``--quick``: one trace (the shipped ``tests/data/markov3_outage.down`` unless ``--traces``),
one RTT and buffer, 2 replications of 20 s.  Writes ``traces_study.csv`` and
``traces_study.md`` to DIR (default ``out/traces``).  Nothing is tuned: where the fitted model
and the trace disagree, docs/traces.md says why.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from tcpabr_model.capacity import read_trace  # noqa: E402
from tcpabr_model.trace_study import FEEDBACKS, fit_for_rtt, lift_outage, study_point, window_packets  # noqa: E402

SHARED = ROOT.parent / "shared" / "traces"
SHARED_TRACES = ("Verizon-LTE-short.down", "TMobile-LTE-short.down", "TMobile-UMTS-driving.down")


def run(traces, rtts, buffers, replications, duration, seed, workers, max_states, log=print) -> pd.DataFrame:
    rows = []
    for path in traces:
        trace = read_trace(path)
        for rtt in rtts:
            fit = fit_for_rtt(trace, rtt)
            mean = float(fit.model.mean)
            peak = float(np.max(fit.model.levels))
            for bf in buffers:
                bmax = max(1, int(round(bf * mean * rtt)))
                wmax = window_packets(peak, rtt, bmax)
                for fb in FEEDBACKS:
                    t0 = time.perf_counter()
                    pt = study_point(trace, fit, rtt, bmax, fb, wmax=wmax, replications=replications,
                                     duration=duration, seed=seed, workers=workers, max_states=max_states)
                    row = {"trace_file": Path(path).name, "rtt_ms": round(rtt * 1000), "buffer_bdp": bf,
                           "mean_pps": mean, "peak_level_pps": peak, "ec_error": fit.ec_error, **pt.to_dict(),
                           "seconds": time.perf_counter() - t0}
                    rows.append(row)
                    log(f"{row['trace_file']:28s} rtt {row['rtt_ms']:3d} ms B {bmax:4d} {fb:8s} "
                        f"analysis {_band(pt.analysis_conservative, pt.analysis_optimistic):>13s}  "
                        f"fitted {pt.fitted:.3f} ± {pt.fitted_half_width:.3f}  "
                        f"trace {pt.trace:.3f} ± {pt.trace_half_width:.3f}  ({row['seconds']:.0f} s)", flush=True)
    return pd.DataFrame(rows)


def epoch_smoothed(trace, epoch: float):
    """The trace with its opportunities spread evenly inside each epoch of ``epoch`` s: the
    same count per epoch (the fit's data), none of the variation inside an epoch."""
    from tcpabr_model.capacity import Trace, bin_trace

    b = bin_trace(trace, epoch)
    e_ms = int(round(epoch * 1000))
    times = []
    for k, n in enumerate(b.counts):
        if n:
            times.append(k * e_ms + np.ceil(np.arange(1, n + 1) * e_ms / n).astype(np.int64))
    t = np.concatenate(times)
    if t[-1] < len(b.counts) * e_ms:       # keep the period a whole number of epochs
        t = np.append(t, len(b.counts) * e_ms)
    return Trace(t, name=f"{trace.name} smoothed to {epoch:g} s")


def mechanisms(traces, rtt, buffers, replications, duration, seed, workers, log=print) -> pd.DataFrame:
    """Where the fitted chain and the trace part: one capacity process changed at a time.

    trace -> trace smoothed inside each epoch (the variation the chain cannot see) -> the
    k-means chain (a Markov chain of the epoch sequence) -> the same with the outage lifted
    (the analysis' chain) ; and the HMM chain (better lag correlation, docs/traces.md sec. 4).
    """
    from tcpabr_model.capacity import fit_trace
    from tcpabr_model.trace_study import _simulate

    rows = []
    for path in traces:
        trace = read_trace(path)
        km = fit_for_rtt(trace, rtt)
        try:
            hmm = fit_trace(trace, epoch=rtt, method="hmm", states=km.states)
        except (ImportError, ValueError) as e:
            hmm = None
            log(f"no HMM fit: {e}")
        procs = [("trace", trace), ("smoothed to the epoch", epoch_smoothed(trace, rtt)),
                 ("k-means chain", km.model), ("k-means chain, outage lifted", lift_outage(km.model, rtt))]
        if hmm is not None:
            procs.append(("HMM chain", hmm.model))
        mean = float(km.model.mean)
        for bf in buffers:
            bmax = max(1, int(round(bf * mean * rtt)))
            wmax = window_packets(float(np.max(km.model.levels)), rtt, bmax)
            for fb in ("none", "instcap"):
                for name, proc in procs:
                    m, h = _simulate(proc, rtt, bmax, wmax, fb, replications, duration, seed, workers)
                    rows.append({"trace_file": Path(path).name, "rtt_ms": round(rtt * 1000), "buffer_bdp": bf,
                                 "bmax": bmax, "feedback": fb, "process": name, "efficiency": m, "half_width": h})
                    log(f"{Path(path).name:28s} B {bmax:4d} {fb:8s} {name:30s} {m:.3f} ± {h:.3f}", flush=True)
    return pd.DataFrame(rows)


def _band(lo, hi) -> str:
    return "-" if lo is None or pd.isna(lo) else f"{lo:.3f}-{hi:.3f}"


def markdown(df: pd.DataFrame) -> str:
    out = ["| trace | RTT ms | buffer (BDP, packets) | feedback | K | analysis band | sim fitted | sim trace | fitted vs trace |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in df.itertuples():
        name = {"none": "TCP alone"}.get(r.feedback, r.feedback.upper())
        out.append(f"| {r.trace_file} | {r.rtt_ms} | {r.buffer_bdp:g} ({r.bmax}) | {name} | {r.states} | "
                   f"{_band(r.analysis_conservative, r.analysis_optimistic)} | "
                   f"{r.fitted:.3f} ± {r.fitted_half_width:.3f} | {r.trace:.3f} ± {r.trace_half_width:.3f} | "
                   f"{100 * r.fitted_rel_error:+.1f} % |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one trace, RTT and buffer; 2 x 20 s")
    ap.add_argument("--traces", nargs="+", help="Mahimahi trace files (default: the shared traces)")
    ap.add_argument("--rtts", default="0.02,0.05,0.1", help="round trips, seconds, comma-separated")
    ap.add_argument("--buffers", default="0.5,2", help="buffers in mean bandwidth-delay products")
    ap.add_argument("--replications", type=int, default=5)
    ap.add_argument("--duration", type=float, default=None, help="simulated seconds per replication "
                    "(default: the trace's period, at most 300 s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--max-states", type=int, default=2_000_000)
    ap.add_argument("--mechanisms", action="store_true",
                    help="only the decomposition of the fitted-vs-trace gap at the last RTT "
                    "(trace, smoothed trace, k-means chain, outage lifted, HMM chain; HMM needs hmmlearn)")
    ap.add_argument("--out", default=str(ROOT / "out" / "traces"))
    a = ap.parse_args(argv)
    rtts = [float(x) for x in a.rtts.split(",")]
    buffers = [float(x) for x in a.buffers.split(",")]
    if a.traces:
        traces = a.traces
    elif a.quick or not SHARED.is_dir():
        traces = [str(ROOT / "tests" / "data" / "markov3_outage.down")]
    else:
        traces = [str(SHARED / f) for f in SHARED_TRACES]
    reps, dur = a.replications, a.duration
    if a.quick:
        rtts, buffers, reps, dur = rtts[-1:], buffers[:1], 2, dur or 20.0
    t0 = time.perf_counter()
    if a.mechanisms:
        d = dur or 140.0
        df = mechanisms(traces, rtts[-1] if a.quick else 0.05, buffers, reps, d, a.seed, a.workers)
        os.makedirs(a.out, exist_ok=True)
        df.to_csv(os.path.join(a.out, "traces_mechanisms.csv"), index=False)
        print(df.pivot_table(index=["trace_file", "buffer_bdp", "feedback"], columns="process",
                             values="efficiency", sort=False).round(3).to_string())
        print(f"{time.perf_counter() - t0:.0f} s; table in {a.out}/traces_mechanisms.csv")
        return 0
    frames = []
    for path in traces:
        d = dur
        if d is None:
            d = min(300.0, read_trace(path).period_ms / 1000.0)
        frames.append(run([path], rtts, buffers, reps, d, a.seed, a.workers, a.max_states))
    df = pd.concat(frames, ignore_index=True)
    os.makedirs(a.out, exist_ok=True)
    df.to_csv(os.path.join(a.out, "traces_study.csv"), index=False)
    md = markdown(df)
    Path(a.out, "traces_study.md").write_text(md + "\n")
    print()
    print(md)
    within = df[np.abs(df.fitted_rel_error) <= 0.05]
    print(f"\nfitted chain within 5 % of the trace replay at {len(within)} of {len(df)} points; "
          f"{time.perf_counter() - t0:.0f} s; tables in {a.out}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
