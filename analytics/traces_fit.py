"""Fit K-level Markov capacity models to the shared cellular traces and report the fit.

For each Mahimahi trace in ``../shared/traces`` (Verizon-LTE-short, TMobile-LTE-short,
TMobile-UMTS-driving): the automatic fit (:func:`tcpabr_model.capacity.fit_trace`, epoch
0.1 s, EC criterion) with its levels, occupancy, autocorrelation and effective-capacity
curve; the level methods compared (k-means, quantiles and, when ``hmmlearn`` is importable,
a Gaussian HMM) for K = 2..8; the effect of the epoch length; and the EFFCAP design rule's
M and N with what EFFCAP would feed back on the trace and on a trace drawn from the fitted
chain.  Public API only.  Prints markdown (the tables of ``docs/traces.md``).

Usage::

    python analytics/traces_fit.py [--traces DIR] [--epoch 0.1] [--no-hmm]

When the folder does not exist (a user's clone has no ``../shared``) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import tcpabr_model.capacity as cap  # noqa: E402
import tcpabr_model.closed_forms as cf  # noqa: E402

TRACES = ("Verizon-LTE-short.down", "TMobile-LTE-short.down", "TMobile-UMTS-driving.down")
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "traces"
LAGS_SHOWN = (1, 2, 5, 10, 20)
RTTS = (0.02, 0.05, 0.1, 0.2)
BOOTSTRAP = 200
TEST_PATHS = 100


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def write_report(df, out: Path, stem: str, text: str, t0: float) -> None:
    """A script's table and its Markdown summary under ``out`` (``stem``.csv and .md, atomically), the
    summary printed with the seconds since ``t0``."""
    from tcpabr_model.runtime.atomic import write_table, write_text

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_table(df, out / f"{stem}.csv")
    write_text(out / f"{stem}.md", text)
    print(text)
    print(f"{time.perf_counter() - t0:.0f} s; wrote {out}/{stem}.csv and .md")


def study_parser(doc: str, out: str, traces_dir: Path) -> argparse.ArgumentParser:
    """The arguments every script over a study's CSV takes: ``--study``, ``--traces-dir``, ``--out``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--study", type=Path, required=True, help="a traces_study.csv of analytics/traces.py")
    ap.add_argument("--traces-dir", type=Path, default=traces_dir)
    ap.add_argument("--out", type=Path, default=Path(out))
    return ap


def read_study(path: Path):
    """The study's table, or None after one line on stderr (the script exits 2)."""
    import pandas as pd

    if not Path(path).is_file():
        print(f"tcpabr: --study {path}: no such file", file=sys.stderr)
        return None
    return pd.read_csv(path)


def study_groups(df) -> list:
    """``(label, rows)`` of a study table: all of it, then by feedback, by RTT and by buffer."""
    return ([("all", df)] + [(f"{fb}", g) for fb, g in df.groupby("feedback")]
            + [(f"{r} ms", g) for r, g in df.groupby("rtt_ms")] + [(f"{b} BDP", g) for b, g in df.groupby("buffer_bdp")])


def point_label(p) -> str:
    """A study point's name in the scripts' logs: trace, RTT, fitted half, buffer, feedback."""
    return (f"{p.trace_file.split('.')[0]:22s} {int(p.rtt_ms):3d} ms {p.fit_half} {p.buffer_bdp:3.1f} BDP "
            f"{p.feedback:7s}")


class StudyLinks:
    """The halves of a study's traces (``trace_study.trace_halves``) and the links fitted on them, each
    read or fitted once."""

    def __init__(self, trace_dir: Path):
        self.trace_dir, self._halves, self._links = Path(trace_dir), {}, {}

    def half(self, name: str, which: str):
        from tcpabr_model.trace_study import trace_halves

        if name not in self._halves:
            self._halves[name] = dict(zip("AB", trace_halves(cap.read_trace(self.trace_dir / name))))
        return self._halves[name][which]

    def link(self, name: str, which: str, rtt: float, **kw):
        """``trace_study.fit_link(half, rtt, **kw)``, once per arguments."""
        from tcpabr_model.trace_study import fit_link

        key = (name, which, rtt, tuple(sorted(kw.items())))
        if key not in self._links:
            self._links[key] = fit_link(self.half(name, which), rtt, **kw)
        return self._links[key]


    def points(self, study, state_limit: int):
        """``(p, link, loss_cycle)`` per analysed TCP-alone and INSTCAP point of ``study`` of at most
        ``state_limit`` states: the row, its link as the study fitted it (patterns, order) and its loss cycle
        (None: the study's default)."""
        import pandas as pd

        todo = study[study.prediction.notna() & study.feedback.isin(["none", "instcap"])
                     & (study.analysis_states <= state_limit)]
        for _, p in todo.iterrows():
            order = int(p.order) if "order" in p.index and pd.notna(p.order) else 1
            link = self.link(p.trace_file, p.fit_half, float(p.rtt), patterns=int(p.patterns), order=order)
            yield p, link, (p.loss_cycle if isinstance(p.loss_cycle, str) else None)


def compare_option(study, trace_dir: Path, state_limit: int, option: str, values: tuple, suffix: str,
                   log=print):
    """Per analysed point (:meth:`StudyLinks.points`), ``analyze_link`` with ``option`` at its default
    ``values[0]`` and at ``values[1]``: a table of the prediction and the band of both (the second's columns
    named ``*_{suffix}``), ``change`` (second over first, minus 1), the replays and the seconds."""
    import pandas as pd

    from tcpabr_model.trace_study import analyze_link

    rows = []
    for p, link, lc in StudyLinks(trace_dir).points(study, state_limit):
        t0 = time.perf_counter()
        a, b = (analyze_link(link, int(p.bmax), p.feedback, wmax=int(p.wmax), loss_cycle=lc, max_states=4 * state_limit,
                             **{option: v}) for v in values)
        row = {"trace": p.trace_file.split(".")[0], "rtt_ms": int(p.rtt_ms), "fit_half": p.fit_half,
               "buffer_bdp": p.buffer_bdp, "bmax": int(p.bmax), "feedback": p.feedback,
               **{f"{k}{s}": getattr(r, k) for r, s in ((a, ""), (b, f"_{suffix}"))
                  for k in ("prediction", "conservative", "optimistic")},
               "change": b.prediction / a.prediction - 1.0, "replay_fitted_half": p.replay_fitted_half,
               "replay": p.replay, "seconds": time.perf_counter() - t0}
        log(f"{point_label(p)} prediction: {values[0]} {a.prediction:.4f}  {values[1]} {b.prediction:.4f}  "
            f"({row['seconds']:.0f} s)", flush=True)
        rows.append(row)
    return pd.DataFrame(rows)


def study_main(ap, argv, run, summary, stem: str, extra=None) -> int:
    """The body of a script over a study's points: parse ``ap``, read ``--study`` (exit 2 without it), ``df =
    run(study, args)``, ``extra(df, args)`` where given, and write ``stem``.csv/.md with ``summary(df)``."""
    a = ap.parse_args(argv)
    study = read_study(a.study)
    if study is None:
        return 2
    t0 = time.perf_counter()
    df = run(study, a)
    if extra is not None and len(df):
        df = extra(df, a)
    write_report(df, a.out, stem, summary(df) if len(df) else "no point analysed\n", t0)
    return 0


def acf_error(x, model, lags):
    """Mean |trace ACF - chain ACF| over lags."""
    return float(np.mean(np.abs(cap.trace_autocorrelation(x, lags) - cap.chain_autocorrelation(model, lags))))


def report_trace(path: Path, epoch: float, use_hmm: bool) -> str:
    out = []
    t = cap.read_trace(path)
    t0 = time.perf_counter()
    fit = cap.fit_trace(t, epoch=epoch)
    t_fit = time.perf_counter() - t0
    boot = cap.fit_trace(t, states=fit.states, epoch=epoch, bootstrap=BOOTSTRAP, seed=1)
    m = fit.model
    out.append(f"### {path.name}\n")
    out.append(f"{t.n_opportunities:,} opportunities over {t.period_ms / 1000:.1f} s: mean "
               f"{t.mean_rate:.1f} packets/s = {t.mean_bits_per_second / 1e6:.3f} Mbit/s (1500-byte packets); "
               f"{fit.n_epochs} epochs of {epoch:g} s, {fit.dropped} opportunities in a dropped partial epoch; "
               f"fit in {t_fit:.2f} s.  K = {fit.states} chosen by {fit.selection} "
               f"({fit.method}); EC error {fit.ec_error:.3f}; the same error for {BOOTSTRAP} paths of the "
               f"fitted chain as long as the trace (sampling alone): median {boot.ec_error_sampling[0]:.3f}, "
               f"95th percentile {boot.ec_error_sampling[1]:.3f}.\n")
    tst = cap.fit_trace(t, epoch=epoch, select="test", bootstrap=TEST_PATHS, seed=1)
    q95 = {c["K"]: c["ec_error_sampling"][1] for c in tst.candidates if "ec_error_sampling" in c}
    out.append(f"Candidates (k-means). Last column: 95th percentile of the EC error of {TEST_PATHS} paths of that "
               f"K's own chain as long as the trace; the smallest K whose error is below it (select='test') "
               f"is K = {tst.states}.\n")
    out.append(md_table(["K", "BIC", "EC error", "sampling 95 %"],
                        [(c["K"], f"{c['bic']:.0f}", f"{c['ec_error']:.3f}", f"{q95.get(c['K'], float('nan')):.3f}")
                         for c in fit.candidates]) + "\n")
    out.append("Levels and occupancy:\n")
    out.append(md_table(["level", "packets/s", "Mbit/s", "occupancy (trace)", "pi (chain)", "P(stay)"],
                        [(i, f"{c:.1f}", f"{b / 1e6:.3f}", f"{o:.4f}", f"{p:.4f}", f"{m.transition[i, i]:.3f}")
                         for i, (c, b, o, p) in enumerate(zip(m.levels, m.bits_per_second, fit.occupancy_trace,
                                                              fit.occupancy_model))]) + "\n")
    lags = [lag for lag in LAGS_SHOWN if lag <= len(fit.acf_lags)]
    out.append("Autocorrelation of the epoch capacity (lag in epochs):\n")
    out.append(md_table(["lag"] + [str(lag) for lag in lags],
                        [["trace"] + [f"{fit.acf_trace[lag - 1]:.3f}" for lag in lags],
                         ["chain"] + [f"{fit.acf_model[lag - 1]:.3f}" for lag in lags]]) + "\n")
    out.append(f"Effective capacity, packets/s, blocks of M = {fit.block} epochs "
               f"({fit.block * epoch:g} s); delta per packet:\n")
    out.append(md_table(["delta", "empirical eq. 25", "chain eq. 24", "chain eq. 23", "(eq24 - emp) / mean"],
                        [(f"{d:.3g}", f"{e:.1f}", f"{a:.1f}", f"{b:.1f}", f"{(a - e) / fit.mean_trace:+.3f}")
                         for d, e, a, b in zip(fit.ec_delta, fit.ec_empirical, fit.ec_fitted_eq24,
                                               fit.ec_fitted_eq23)]) + "\n")
    # level methods
    x = cap.bin_trace(t, epoch).rates
    lag_all = list(range(1, 21))
    rows = []
    for k in range(2, 9):
        row = [k]
        for meth in ("kmeans", "quantile"):
            try:
                f = cap.fit_trace(t, states=k, epoch=epoch, method=meth)
                row += [f"{f.candidates[0]['bic']:.0f}", f"{f.ec_error:.3f}", f"{acf_error(x, f.model, lag_all):.3f}"]
            except ValueError:
                row += ["-", "-", "-"]
        if use_hmm:
            f = cap.fit_trace(t, states=k, epoch=epoch, method="hmm")
            row += [f"{f.ec_error:.3f}", f"{acf_error(x, f.model, lag_all):.3f}"]
        rows.append(row)
    head = ["K", "k-means BIC", "k-means EC err", "k-means ACF err", "quantile BIC", "quantile EC err",
            "quantile ACF err"] + (["HMM EC err", "HMM ACF err"] if use_hmm else [])
    if use_hmm:
        t0 = time.perf_counter()
        fh = cap.fit_trace(t, epoch=epoch, method="hmm")
        t_h = time.perf_counter() - t0
        out.append(f"HMM fit (auto K by the EC criterion, {t_h:.1f} s): K = {fh.states}, levels "
                   f"{', '.join(f'{c:.1f}' for c in fh.model.levels)} packets/s, EC error {fh.ec_error:.3f}; "
                   "autocorrelation at lags " + ", ".join(str(lag) for lag in lags) + ": trace "
                   + ", ".join(f"{fh.acf_trace[lag - 1]:.3f}" for lag in lags) + "; HMM chain "
                   + ", ".join(f"{fh.acf_model[lag - 1]:.3f}" for lag in lags) + ".\n")
    out.append("Level methods (EC err: max |emp. eq. 25 - chain eq. 24| / mean over the delta grid; ACF err: "
               "mean |trace - chain| autocorrelation over lags 1..20):\n")
    out.append(md_table(head, rows) + "\n")
    # epoch length
    rows = []
    for e in (0.03, 0.1, 0.3, 1.0):
        f = cap.fit_trace(t, epoch=e)
        rows.append((f"{e:g}", f.n_epochs, f.states, f"{f.ec_error:.3f}", f"{f.acf_trace[0]:.3f}",
                     f"{f.acf_model[0]:.3f}", f"{f.acf_trace[min(9, len(f.acf_trace) - 1)]:.3f}",
                     f"{f.acf_model[min(9, len(f.acf_model) - 1)]:.3f}",
                     f"{f.occupancy_trace[0] if f.model.levels[0] == 0 else 0.0:.3f}"))
    out.append("Epoch length (auto K, EC criterion, blocks of 10 epochs):\n")
    out.append(md_table(["epoch (s)", "epochs", "K", "EC err", "ACF lag 1 trace", "chain", "ACF lag 10 trace",
                         "chain", "outage fraction"], rows) + "\n")
    # EFFCAP design rule and what it feeds back
    rows = []
    syn = cap.synthetic_trace(m, 20 * fit.n_epochs, seed=1)
    counts_t = cap.bin_trace(t, epoch).counts.astype(float)
    counts_m = cap.bin_trace(syn, epoch).counts.astype(float)
    for rtt in RTTS:
        d = cf.effcap_design(rtt, m)
        ft = cf.effcap_feedback_series(np.tile(counts_t, 2), d.M, d.N)[counts_t.size:]  # steady state, cyclic
        fm = cf.effcap_feedback_series(counts_m, d.M, d.N)
        fm = fm[~np.isnan(fm)]
        rows.append((f"{rtt:g}", d.M, d.N, f"{d.N_range[0]}..{d.N_range[1]}",
                     f"{np.mean(ft) / epoch / fit.mean_trace:.3f}", f"{np.mean(fm) / epoch / m.mean:.3f}"))
    out.append(f"EFFCAP design rule (Section VI) with s = epoch = {epoch:g} s, k = 8 (N range for k = 8..12), and "
               "the mean EFFCAP feedback (eq. 28 every epoch) / mean capacity on the trace and on a 20x longer "
               "trace drawn from the fitted chain (seed 1):\n")
    out.append(md_table(["RTT (s)", "M", "N", "N (k=8..12)", "EFFCAP/mean, trace", "EFFCAP/mean, chain"], rows)
               + "\n")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=str(DEFAULT_DIR), help="folder with the Mahimahi traces")
    ap.add_argument("--epoch", type=float, default=0.1)
    ap.add_argument("--no-hmm", action="store_true", help="skip the hmmlearn comparison")
    args = ap.parse_args(argv)
    folder = Path(args.traces)
    if not folder.is_dir():
        print(f"{folder} does not exist: the shared traces are not in this checkout; nothing to do")
        return 0
    use_hmm = not args.no_hmm
    if use_hmm:
        try:
            import hmmlearn  # noqa: F401
        except ImportError:
            print("(hmmlearn is not installed: the HMM columns are left out)\n")
            use_hmm = False
    for name in TRACES:
        p = folder / name
        if p.exists():
            print(report_trace(p, args.epoch, use_hmm))
        else:
            print(f"{p} is missing; skipped\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
