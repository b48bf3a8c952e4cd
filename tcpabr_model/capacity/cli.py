"""``tcpabr trace fit``: fit a K-level Markov capacity model to a Mahimahi trace.

``tcpabr trace fit TRACE [--states K] [--epoch SECONDS] [--method kmeans|quantile|hmm]
[--outage | --no-outage] [--select ec|bic|test] [--block M] [--bootstrap B] [--rtt SECONDS ...]
[--regimes R [--regime-window SECONDS]] [--order 1|2] [--out model.json|model.toml] [--json]``

Prints the levels (packets/s and Mbit/s), the transition matrix per epoch, the level
occupancy (trace vs stationary chain), the autocorrelation at a few lags and the
effective capacity over delta (empirical eq. 25 vs the fitted chain's eq. 24 and eq. 23);
``--rtt`` adds the EFFCAP design rule's M and N (Section VI) for that round-trip time with
the epoch as measurement interval.  ``--outage`` / ``--no-outage`` is
:func:`~tcpabr_model.capacity.fit_trace`'s ``outage`` (default on: empty epochs form their
own level 0); ``--regimes R`` fits the two-timescale regime x level chain (R regimes of the
capacity smoothed over ``--regime-window``, ``K / R`` levels in each; docs/traces.md sec. 4a);
``--order 2`` the second-order chain, whose states are the visited (previous, current) pairs of
the K levels (docs/traces.md sec. 7.2x; its matrix is in the JSON and the ``--out`` file);
without it the levels are fitted to all epochs together, which usually (not
always) leaves no level 0, and the text output says when one remains.  JSON keys: those of ``TraceFit.to_dict()`` plus
``effcap_design`` with ``--rtt``.  The module imports nothing heavy until it runs.
"""

from __future__ import annotations

import argparse

from .._validate import int_arg

__all__ = ["register"]


def _checked(args):
    """The trace, ``--max-lag`` and ``--select`` after the checks that need no fit: options that
    would be ignored, a lag beyond the trace, an unwritable ``--out`` (before minutes of fitting)."""
    from . import bin_trace, read_trace

    if args.regime_window is not None and args.regimes == 1:
        raise ValueError(f"--regime-window={args.regime_window:g} is used only with --regimes R > 1 (the window "
                         "that defines the regimes of the two-timescale fit)")
    if args.order == 2 and args.regimes > 1:
        raise ValueError(f"--order 2 is invalid with --regimes {args.regimes}: the second-order chain is of the "
                         "one-timescale fit (give --regimes 1)")
    if args.select is not None and args.states is not None:
        raise ValueError(f"--select={args.select} is used only without --states (it chooses K; --states "
                         f"{args.states} gives it)")
    if args.out:
        from ..runtime.paths import check_output_file

        check_output_file(args.out, "--out", (".json", ".toml"))
    trace = read_trace(args.trace)
    max_lag = 20
    if args.max_lag is not None:
        n = bin_trace(trace, args.epoch).n_epochs
        if args.max_lag < 1 or args.max_lag > n:
            raise ValueError(f"--max-lag={args.max_lag} is invalid: must be an integer in [1, {n}] (the whole "
                             f"epochs of the trace at --epoch {args.epoch:g}; a longer lag wraps around)")
        max_lag = args.max_lag
    return trace, max_lag, "ec" if args.select is None else args.select


def _fit(args) -> int:
    from ..cli import emit
    from ..closed_forms import effcap_design
    from . import EC_TOL, fit_trace, save_model
    from ._trace import long_gap_note

    trace, max_lag, select = _checked(args)
    fit = fit_trace(trace, states=args.states, epoch=args.epoch, method=args.method,
                    outage=args.outage, select=select, block=args.block, max_lag=max_lag,
                    bootstrap=args.bootstrap, seed=args.seed, regimes=args.regimes,
                    regime_window=args.regime_window, order=args.order)
    m = fit.model
    out = fit.to_dict()
    design = [effcap_design(rtt, m, k=8) for rtt in (args.rtt or [])]
    if design:
        out["effcap_design"] = [{"rtt": r, "M": d.M, "N": d.N, "N_range": list(d.N_range)}
                                for r, d in zip(args.rtt, design)]
    if args.out:
        save_model(m, args.out)
        out["saved"] = args.out
    lines = [f"{args.trace}: {fit.n_epochs} epochs of {fit.epoch:g} s, mean {fit.mean_trace:.1f} packets/s "
             f"({fit.mean_trace * m.packet_bytes * 8e-6:.3f} Mbit/s); K = {fit.states} ({fit.selection}, "
             f"{fit.method}); dropped {fit.dropped} opportunities of a partial epoch",
             "level  packets/s  Mbit/s  occupancy(trace)  pi(chain)" + ("  regime" if fit.regimes > 1 else "")
             + ("  (previous, current) first-order level" if fit.order == 2 else "")]
    if fit.regimes > 1:
        lines.insert(1, f"{fit.regimes} regimes of the capacity smoothed over {fit.regime_window:g} s, "
                        f"{fit.states // fit.regimes} levels each (states ordered regime by regime)")
    if fit.order == 2:
        lines.insert(1, f"second order: the {fit.states} states are the (previous, current) pairs of the "
                        f"{max(fit.base_of_state) + 1} first-order levels that the trace visits (K chosen on the "
                        "first-order chain); each state serves its current level")
    for i, (c, b, o, p) in enumerate(zip(m.levels, m.bits_per_second, fit.occupancy_trace, fit.occupancy_model)):
        rate = f"{c:9.1f}" if c == 0.0 or c >= 0.05 else f"{c:9.1e}"   # a level that is not 0 never reads 0.0
        lines.append(f"{i:5d}  {rate}  {b * 1e-6:6.3f}  {o:16.4f}  {p:9.4f}"
                     + (f"  {fit.regime_of_state[i]:6d}" if fit.regimes > 1 else "")
                     + (f"  ({fit.previous_of_state[i]}, {fit.base_of_state[i]})" if fit.order == 2 else ""))
    if m.has_outage:
        how = ("k-means/quantiles put only empty epochs in the lowest level" if not args.outage
               else "empty epochs form their own level; --no-outage fits the levels to all epochs together")
        zero = [str(i) for i, c in enumerate(m.levels) if c == 0.0]
        which = f"level {zero[0]} is an outage" if len(zero) == 1 else f"levels {', '.join(zero)} are outages"
        lines.append(f"{which} (0 packets/s): {how}")
    gap = long_gap_note(trace)
    if gap is not None:
        out["notes"] = [gap]
        lines.append(f"note: {gap}")
    if fit.order == 2:
        lines.append(f"transition matrix per epoch: {fit.states} x {fit.states}, in the JSON (--json) and --out file")
    else:
        lines.append("transition matrix per epoch:")
        lines += ["  " + " ".join(f"{v:6.3f}" for v in row) for row in m.transition]
    show = [lag for lag in (1, 2, 5, 10, 20, 50) if lag <= len(fit.acf_lags)]
    lines.append("autocorrelation  lag: " + "  ".join(f"{lag:6d}" for lag in show))
    lines.append("                trace: " + "  ".join(f"{fit.acf_trace[lag - 1]:6.3f}" for lag in show))
    lines.append("                chain: " + "  ".join(f"{fit.acf_model[lag - 1]:6.3f}" for lag in show))
    lines.append(f"effective capacity, packets/s (blocks of M = {fit.block} epochs):")
    lines.append("  delta/packet  empirical(eq25)  fitted(eq24)  fitted(eq23)")
    for d, e, f24, f23 in zip(fit.ec_delta, fit.ec_empirical, fit.ec_fitted_eq24, fit.ec_fitted_eq23):
        lines.append(f"  {d:12.4g}  {e:15.1f}  {f24:12.1f}  {f23:12.1f}")
    lines.append(f"max |empirical - fitted eq24| / mean = {fit.ec_error:.3f}")
    if fit.selection == "ec" and fit.ec_error > EC_TOL:    # no K within fit_trace's default: said (a CLI audit)
        lines.append(f"  ({fit.ec_error:.4f}: above the {EC_TOL:g} that --select ec asks for; no K up to "
                     f"{max(c['K'] for c in fit.candidates)} reaches it, so the K with the smallest error is kept)")
    if fit.ec_error_sampling:
        lines.append(f"same error for {fit.bootstrap} paths of the fitted chain as long as the trace: median "
                     f"{fit.ec_error_sampling[0]:.3f}, 95th percentile {fit.ec_error_sampling[1]:.3f}")
    lines.append("K tried: " + ", ".join(f"K={c['K']} BIC={c['bic']:.0f} ec_err={c['ec_error']:.3f}"
                                         for c in fit.candidates))
    for r, d in zip(args.rtt or [], design):
        lines.append(f"EFFCAP design for RTT {r:g} s, s = {fit.epoch:g} s: M = {d.M}, N = {d.N} "
                     f"(k = 8..12: N = {d.N_range[0]}..{d.N_range[1]})")
    if args.out:
        lines.append(f"model written to {args.out}")
    emit(out, args.json, "\n".join(lines))
    return 0


def register(subparsers) -> None:
    """Add ``trace`` with its ``fit`` subcommand."""
    t = subparsers.add_parser("trace", help="measured link traces (Mahimahi format): fit a capacity model")
    tsub = t.add_subparsers(dest="trace_command", required=True)  # parser class inherited from t
    p = tsub.add_parser("fit", help="fit a K-level Markov capacity model to a trace and report the fit",
                        description=__doc__.splitlines()[0])
    p.add_argument("trace", help="Mahimahi trace file (one integer ms per line, one 1500-byte packet each)")
    p.add_argument("--states", type=int_arg(1), default=None, help="number of levels K (default: chosen, see --select)")
    p.add_argument("--epoch", type=float, default=0.1, help="epoch (bin) length in seconds (default 0.1)")
    p.add_argument("--method", choices=("kmeans", "quantile", "hmm"), default="kmeans",
                   help="level method (hmm needs the optional package hmmlearn)")
    p.add_argument("--outage", action=argparse.BooleanOptionalAction, default=True,
                   help="empty epochs form their own level 0 (fit_trace's outage=True); --no-outage fits the "
                        "levels to all epochs together (k-means can still make a level of empty epochs only "
                        "on a trace with many of them)")
    p.add_argument("--select", choices=("ec", "bic", "test"), default=None,
                   help="how K is chosen without --states (refused with it): effective-capacity error within "
                        "5%% (ec, the default), BIC, or the smallest K not rejected by the bootstrap test (needs "
                        "--bootstrap)")
    p.add_argument("--block", type=int_arg(1), default=10, help="block length M in epochs for eqs. 24-25 (default 10)")
    p.add_argument("--max-lag", type=int_arg(1), default=None,
                   help="autocorrelation lags 1..N epochs, N at most the trace's epochs (default 20)")
    p.add_argument("--bootstrap", type=int_arg(0, 100_000), default=0,
                   help="paths of the fitted chain drawn to show the EC error of sampling alone (default 0)")
    p.add_argument("--seed", type=int_arg(0), default=0, help="seed of the bootstrap paths (default 0)")
    p.add_argument("--rtt", type=float, nargs="+", default=None,
                   help="round-trip times in seconds: print the EFFCAP design rule's M and N")
    p.add_argument("--regimes", type=int_arg(1, 16), default=1,
                   help="two-timescale fit: R regimes of the smoothed capacity, K/R levels each, the chain on "
                        "(regime, level) (default 1: one timescale)")
    p.add_argument("--regime-window", type=float, default=None,
                   help="with --regimes R > 1 (refused without): smoothing window in seconds, > 0, that "
                        "defines the regimes (default: the e-folding time of the trace's autocorrelation)")
    p.add_argument("--order", type=int_arg(1, 2), choices=(1, 2), default=1,
                   help="2: the second-order chain, states = the (previous, current) level pairs the trace visits "
                        "(default 1)")
    p.add_argument("--out", default=None, help="write the model to this .json or .toml file")
    p.add_argument("--json", action="store_true", help="print JSON")
    # effcap_design(rtt, model) names the round trip delta and the epoch s
    p.set_defaults(func=_fit, _flag_aliases={"delta": "--rtt", "s": "--epoch"})
