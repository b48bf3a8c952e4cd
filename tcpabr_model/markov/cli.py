"""``tcpabr analyze``: Markov renewal throughput bounds of one scenario."""

from __future__ import annotations

import argparse

# keep this module light: heavy imports (numba kernels, scipy) happen in the handler, so
# argument errors and refusals answer fast
from .._validate import int_arg
from .scenario import (ACK_CLOCKS, CA_INCREMENTS, DUPLICATES, LOSS_CYCLES, ROUND_TRIPS,  # numpy and the validators
                       SILENCES, SWITCH_TIMES, TCP_MODELS)

METHODS = ("structured", "structured-direct", "sparse-direct", "dense", "power", "quantecon")


def register(sub) -> None:
    p = sub.add_parser(
        "analyze",
        help="Markov renewal bounds for TCP over INSTCAP ABR or TCP alone (seed 004, Sec. III)",
        description="Optimistic and conservative efficiency (throughput / mean bottleneck capacity, "
                    "packets incl. TCP/IP headers, no ATM cell tax) of the embedded Markov renewal "
                    "process of Section III of seed 004.",
    )
    p.add_argument("--feedback", type=str.lower, choices=("instcap", "effcap", "none", "constant"), default="instcap",
                   help="'instcap': TCP over ABR; 'effcap': over ABR with EFFCAP(--effcap-m, --effcap-n) measured "
                        "once per round trip (docs/model.md sec. 20); 'none': TCP alone; 'constant': ABR source at "
                        "--source-rate")
    p.add_argument("--effcap-m", type=int_arg(1, 10_000), default=None, metavar="M",
                   help="with --feedback effcap: round trips per average of eq. 28 (default 1, the paper's "
                        "'M : Delta' at a measurement interval of Delta)")
    p.add_argument("--effcap-n", type=int_arg(1, 10_000), default=None, metavar="N",
                   help="with --feedback effcap: averages whose minimum is fed back (default 8: a span of 8 round "
                        "trips, the paper's 'N : 8 Delta'); the chain holds the last M + N - 1 levels, lumped")
    p.add_argument("--delta", type=float, default=None,
                   help="round-trip delay in packet times at the high rate (default: 40)")
    p.add_argument("--bmax", type=int_arg(1, 100_000), default=None,
                   help="bottleneck buffer in packets (incl. the one in service); default 10, required with --trace")
    p.add_argument("--psi", type=float, default=None,
                   help="mean time per capacity state / delta (>= 1); default 20 (two-state chain only)")
    p.add_argument("--rate-ratio", type=float, default=None,
                   help="low rate / high rate, in (0, 1]; default 0.5 (two-state chain only)")
    p.add_argument("--capacity", metavar="FILE", default=None,
                   help="a K-level capacity model file (JSON or TOML, tcpabr_model.capacity.save_model / "
                        "tcpabr trace fit --out) in place of --psi/--rate-ratio; levels are normalised to "
                        "the peak, the chain is taken per round trip (docs/model.md, 'K capacity states')")
    p.add_argument("--trace", metavar="TRACE", default=None,
                   help="a measured link (Mahimahi file): fit it at epoch = --rtt (chain + the opportunity "
                        "patterns inside an epoch, docs/model.md sec. 11) and print prediction, conservative "
                        "and optimistic efficiency over the trace's mean capacity, with the model used; needs "
                        "--rtt and --bmax (refused without them), --feedback none|instcap|effcap")
    p.add_argument("--mcr", type=float, default=0.0,
                   help="INSTCAP: the source's TM 4.0 minimum cell rate, packets per time unit (a fraction of "
                        "the peak rate, in [0, 1]; with --trace, packets per second, in [0, the fitted chain's "
                        "peak level]); the source sends at max(fed-back rate, MCR); default 0")
    p.add_argument("--rtt", type=float, default=None, help="with --trace: round-trip propagation delay, seconds")
    p.add_argument("--patterns", type=int_arg(1, 1000), default=None,
                   help="with --trace: within-epoch patterns kept per level of the fitted chain (default 8)")
    p.add_argument("--states", type=int_arg(1), default=None,
                   help="with --trace: levels of the fitted chain (default: chosen by the effective-capacity "
                        "criterion, at most 8)")
    p.add_argument("--regimes", type=int_arg(1, 16), default=None,
                   help="with --trace: the two-timescale regime x level chain with this many regimes "
                        "(docs/traces.md sec. 4a; default 1)")
    p.add_argument("--order", type=int_arg(1, 2), choices=(1, 2), default=None,
                   help="with --trace: 2 fits the second-order chain, states = the (previous, current) level "
                        "pairs the trace visits (docs/traces.md sec. 7.2x; default 1)")
    p.add_argument("--regime-window", type=float, default=None,
                   help="with --trace and --regimes R > 1 (refused without): smoothing window in seconds, > 0 "
                        "(default: the e-folding time of the trace's autocorrelation)")
    p.add_argument("--wmax", type=int_arg(1, 1_000_000), default=None,
                   help="maximum TCP window in packets (default 128; with --trace twice the peak pipe plus the "
                        "buffer)")
    p.add_argument("--source-rate", type=float, default=None,
                   help="packets per time unit of the constant-rate source (feedback 'constant'), in [lowest level, 1] (two-state: [--rate-ratio, 1])")
    p.add_argument("--bmax-excludes-service", action="store_true",
                   help="the paper's buffer count: bmax waiting places plus the packet in service")
    p.add_argument("--ack-clock", choices=ACK_CLOCKS, default="at-epoch",
                   help="TCP alone: returning ACKs at i*g from the epoch (default), one spacing later, or "
                        "'spread' over the round trip (i*Delta/d; docs/model.md sec. 3a)")
    p.add_argument("--round-trip", choices=ROUND_TRIPS, default="propagation",
                   help="the chain's epoch: delta, the round-trip propagation (default, the paper's), or delta plus "
                        "one transmission at the high rate, a packet's round trip through an empty pipe "
                        "(docs/model.md sec. 3b; two-state chain, loss cycle 'paper'); with --trace: the chain "
                        "fitted at epoch rtt x (1 + tx), tx the mean gap between delivery opportunities in round "
                        "trips (docs/traces.md sec. 7.2y)")
    p.add_argument("--variant", dest="tcp", choices=TCP_MODELS, default="timeout-only",
                   help="TCP of the chain, as tcpabr simulate --variant: timeout-only (default, the paper's: "
                        "every loss a timeout) or sack (fast retransmit with PRR, docs/model.md sec. 12)")
    p.add_argument("--loss-cycle", choices=LOSS_CYCLES, default=None,
                   help="timeout-only TCP: the timeout cycle of III-B.4 as printed (default; with --trace "
                        "'timer'), 'drain': "
                        "recovery waits for the queue ahead of and behind the lost packet to drain "
                        "(buffers above the BDP; docs/model.md sec. 14), or 'timer': the same in continuous "
                        "time, the timer restarted by the last ACK ahead of the loss (sec. 15)")
    p.add_argument("--switch-time", choices=SWITCH_TIMES, default="epoch",
                   help="when the rate changes inside the round trip: at the connection's epochs (default, "
                        "III-B.1 as printed) or 'uniform', at an instant uniform inside it (docs/model.md sec. 17: "
                        "a rate process with changes of its own, the paper's testbed; not with --trace)")
    p.add_argument("--switch-phases", type=int_arg(1, 1000), default=None, metavar="N",
                   help="with --switch-time uniform: the instants of a change, (m + 1/2) / N of the round trip "
                        "(default 4; 8 moves the Fig. 8/9 predictions by under 1 %% for about 3.5 times the states)")
    p.add_argument("--ca-increment", choices=CA_INCREMENTS, default=None,
                   help="how congestion avoidance grows the window: binomial (the paper's eq. 1: each ACK by one "
                        "with probability 1/W; the default) or counter (one packet per W ACKs, as Linux, ns-3 and "
                        "tcpabr simulate; the default with --trace; docs/model.md sec. 18)")
    p.add_argument("--silence", choices=SILENCES, default="epochs",
                   help="with --trace: when the fixed RTO expires for want of ACKs: after two round trips without "
                        "one (epochs, the default) or also in a silence of two round trips across the epochs, with "
                        "the probability the within-epoch patterns give (patterns; docs/model.md sec. 11b)")
    p.add_argument("--duplicates", choices=DUPLICATES, default="none",
                   help="with --loss-cycle timer (the default with --trace): whether the segments go-back-N sends "
                        "again after a timeout count as delivered (none, the default) or not (go-back-n; "
                        "docs/model.md sec. 15d)")
    p.add_argument("--jackknife", type=int_arg(2, 50), default=None, metavar="J",
                   help="with --trace: also fit and analyse the trace less each of its J consecutive blocks "
                        "(2-50; 5 is a good start) and print the jackknife standard error of the prediction: how "
                        "much it owes to the part of the trace the fit saw (docs/traces.md sec. 7.2zd; J times "
                        "the time)")
    p.add_argument("--window-tail", type=float, default=None,
                   help="solve the chain of a smaller window cap where the window spends at most this share of "
                        "the time near that cap (docs/model.md sec. 19; the results agree to about it); default "
                        "1e-12 with --trace, off otherwise; 0: the chain of --wmax itself")
    p.add_argument("--method", choices=METHODS, default="structured", help="stationary solver")
    p.add_argument("--max-states", type=int_arg(1, 10**9), default=5_000_000,
                   help="refuse (exit 2) if the chain has more reachable states than this (counted "
                        "exactly before building; the count also stops at the states that fit in the available "
                        "memory)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bars (they appear on stderr, only on a terminal, for counts, "
                        "builds and solves longer than 2 s)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    # with --trace the chain is fitted at epoch = --rtt
    p.set_defaults(func=_run, _flag_aliases={"epoch": "--rtt"})


def _run_trace(args: argparse.Namespace) -> int:
    from .._validate import check_int, check_real
    from ..capacity import read_trace
    from ..cli import emit
    from ..trace_study import LINK_WINDOW_TAIL, analyze_link, fit_link, jackknife_link

    if args.rtt is None:
        raise ValueError("rtt=None is invalid with --trace: give the round-trip propagation delay in seconds "
                         "(e.g. --rtt 0.05)")
    given = {"delta": args.delta, "psi": args.psi, "rate_ratio": args.rate_ratio,
             "capacity": args.capacity, "source_rate": args.source_rate}
    for name, value in given.items():
        if value is not None:
            raise ValueError(f"{name}={value!r} is invalid with --trace: the trace gives the link and --rtt the "
                             "round trip")
    if args.switch_time != "epoch" or args.switch_phases is not None:
        what = f"switch_time={args.switch_time!r}" if args.switch_time != "epoch" else \
            f"switch_phases={args.switch_phases}"
        raise ValueError(f"{what} is invalid with --trace: the fitted within-epoch patterns "
                         "already hold the changes of level inside an epoch (docs/model.md sec. 17)")
    if args.ack_clock != "at-epoch":
        raise ValueError(f"ack_clock={args.ack_clock!r} is invalid with --trace: TCP alone's ACKs return at the times "
                         "of the fitted patterns, which hold the link's bursts (docs/model.md secs. 3a and 11)")
    if args.feedback not in ("none", "instcap", "effcap"):
        raise ValueError(f"feedback={args.feedback!r} is invalid with --trace: must be 'none', 'instcap' or 'effcap'")
    check_real("rtt", args.rtt, 0.001, 100.0)   # fit_link's range, before the refusals below
    if args.bmax is None:
        raise ValueError("--bmax is required with --trace: give the bottleneck buffer in packets (e.g. --bmax 20)")
    if args.regime_window is not None:
        if args.regimes is None or args.regimes == 1:
            raise ValueError(f"--regime-window={args.regime_window:g} is used only with --regimes R > 1 (the window "
                             "that defines the regimes of the two-timescale fit)")
        check_real("regime_window", args.regime_window, 0.0, low_open=True)   # before the fit
    if args.order == 2 and args.regimes not in (None, 1):
        raise ValueError(f"--order 2 is invalid with --regimes {args.regimes}: the second-order chain is of the "
                         "one-timescale fit (give --regimes 1)")
    if args.jackknife is not None:
        check_int("jackknife", args.jackknife, 2, 50)
    trace = read_trace(args.trace)
    patterns = 8 if args.patterns is None else args.patterns
    fit = dict(states=args.states, patterns=patterns, regimes=1 if args.regimes is None else args.regimes,
               regime_window=args.regime_window, order=1 if args.order is None else args.order,
               round_trip=args.round_trip)
    link = fit_link(trace, args.rtt, **fit)
    analysis = dict(max_states=args.max_states, mcr=args.mcr, tcp=args.tcp, loss_cycle=args.loss_cycle,
                    ca_increment=args.ca_increment,
                    window_tail=LINK_WINDOW_TAIL if args.window_tail is None else args.window_tail or None,
                    effcap_m=args.effcap_m, effcap_n=args.effcap_n, silence=args.silence, duplicates=args.duplicates)
    r = analyze_link(link, args.bmax, args.feedback, wmax=args.wmax, **analysis)
    jk = None if args.jackknife is None else jackknife_link(trace, args.rtt, args.bmax, args.feedback,
                                                            blocks=args.jackknife, wmax=r.wmax, fit=fit, **analysis)
    if jk is not None:     # the band with the fit's uncertainty: each bound 2 jackknife standard errors out
        band = [max(0.0, r.conservative - 2.0 * jk.conservative_se), min(1.0, r.optimistic + 2.0 * jk.optimistic_se)]
    d = {"trace": args.trace, **r.to_dict(),
         **({"jackknife": {**jk.to_dict(), "band_with_fit": band}} if jk is not None else {}),
         "units": "efficiency = packets delivered in order / packets the link can serve (the trace's mean "
                  "capacity, one 1500-byte opportunity = one packet)"}
    from ..capacity._trace import long_gap_note

    gap = long_gap_note(trace)
    if gap is not None:
        d["notes"] = [gap]
    v = r.validity
    text = (
        f"TCP ({r.tcp}) {'alone' if r.feedback == 'none' else f'over ABR ({r.feedback})'} on {args.trace}: "
        f"rtt={r.model.get('propagation_s', r.rtt):g} s "
        f"bmax={r.bmax} wmax={r.wmax} (mean capacity {link.mean_rate:.1f} packets/s)"
        + (f" loss_cycle={r.loss_cycle}" if r.loss_cycle != "paper" else "")
        + (f" ca_increment={r.ca_increment}" if r.ca_increment != "binomial" else "")
        + (f" silence={r.model['silence']}" if "silence" in r.model else "")
        + (f" duplicates={r.model['duplicates']}" if "duplicates" in r.model else "") + "\n"
        f"  efficiency prediction   {r.prediction:.4f}   band [{r.conservative:.4f}, {r.optimistic:.4f}] "
        "(conservative, optimistic)\n"
        + (f"  jackknife over the trace: standard error {jk.standard_error:.4f} of the prediction; fits less one of "
           f"{jk.blocks} blocks predict {', '.join(f'{x:.3f}' for x in jk.predictions)} ({jk.seconds:.0f} s); "
           f"band with the fit's uncertainty [{band[0]:.4f}, {band[1]:.4f}] (each bound 2 standard errors out, "
           "docs/traces.md sec. 7.2zd)\n" if jk is not None else "")
        + (f"  mean delay per delivered packet (analysis, docs/model.md sec. 13): bottleneck "
           f"{1000 * r.mean_queueing_delay_s:.1f} ms"
           + (f", segmentation buffer {1000 * r.mean_source_delay_s:.1f} ms" if r.feedback != "none" else "")
           + " (propagation on top)\n" if r.mean_queueing_delay_s is not None else "")
        + f"  model: chain of {r.model['states']} level{'s' if r.model['states'] != 1 else ''} at epoch {r.rtt:g} s"
        + (f" (the round trip with the transmission: {r.model['propagation_s']:g} s x (1 + "
           f"{r.model['transmission_share']:.3f}), docs/traces.md sec. 7.2y)" if "propagation_s" in r.model else "")
        + (f" ({r.model['regimes']} regimes of {r.model['states'] // r.model['regimes']} levels, regime window "
           f"{r.model['regime_window_s']:g} s)" if r.model.get("regimes", 1) > 1 else "")
        + (" (second order: (previous, current) level pairs)" if r.model.get("order", 1) == 2 else "")
        + (f", {max(r.model['patterns_per_level'])} within-epoch patterns per level"
           if r.model.get("order", 1) == 2 else f", {sum(r.model['patterns_per_level'])} within-epoch patterns")
        + f"; {r.n_states} states, {r.seconds:.1f} s"
        + (f" (window cap {r.window_solved} solved for {r.wmax}: the window spends "
           f"{r.window_cap_share:.1e} of the time near it)" if r.window_solved != r.wmax else "") + "\n"
        + (f"  INSTCAP: {r.model['instcap_timing']}\n" if "instcap_timing" in r.model else "")
        + (f"  EFFCAP: M={r.model['effcap_m']} N={r.model['effcap_n']} round trips, one sample per round trip, applied "
           f"over the next ({r.model['history_states']} history states of the fitted levels, docs/model.md sec. 20; "
           f"tcpabr simulate --capacity-trace --feedback effcap --interval RTT --feedback-delay 0 --m M --n N)\n"
           if "effcap_m" in r.model else "")
        + ("  assumptions: the level never changes (the chain has one level), outage "
           if r.model["states"] == 1 else
           f"  assumptions: levels last {v['mean_sojourn_rtts_weighted']:.1f} RTTs on average, outage ")
        + f"{v['outage_share']:.1%} of epochs, service lag inside an epoch {v['service_lag_packets']:.1f} packets\n"
        + (f"  strained: {'; '.join(v['strained'])}" if v["strained"] else "  strained: none of the checked assumptions")
        + (f"\n  note: {gap}" if gap is not None else "")
    )
    emit(d, args.json, text)
    return 0


def _small_psi_note(sc, model) -> str:
    """The printed note where the paper's chain is far from the simulator below psi 5 (III-B.1 and
    section 3's ACK clock, docs/model.md secs. 3a and 17), with the option that fixes it."""
    if model is not None or sc.psi >= 5 or sc.switch_time != "epoch" or sc.feedback == "effcap":
        return ""
    if sc.feedback != "none":
        return (f"\n  note: psi={sc.psi:g} < 5 with the rate changed at the epochs (III-B.1): on the Fig. 8/9 grid "
                "this is 14-27 % below the simulator (psi 1.5-3, B_max 10-12); --switch-time uniform changes it inside "
                "the round trip "
                "(docs/model.md sec. 17)")
    if sc.ack_clock == "spread":
        return ""
    return (f"\n  note: psi={sc.psi:g} < 5 with the ACKs back to back at the previous level's spacing (sec. 3): on "
            "the Fig. 8/9 grid TCP alone is 11-26 % below the simulator (psi 1.5-3, B_max 10-12); --ack-clock spread "
            "spreads them over the "
            "round trip (docs/model.md sec. 3a)")


def _run(args: argparse.Namespace) -> int:
    import sys

    from ..cli import emit

    if args.trace is not None:
        return _run_trace(args)
    ignored = [flag for flag, v in (("--rtt", args.rtt), ("--patterns", args.patterns), ("--states", args.states),
                                    ("--regimes", args.regimes), ("--regime-window", args.regime_window),
                                    ("--order", args.order), ("--jackknife", args.jackknife))
               if v is not None]
    if ignored:   # they describe a measured link: silently dropping them would analyse another scenario
        raise ValueError(f"{', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} used only with --trace "
                         "(the two-state chain takes --delta in packet times, --psi and --rate-ratio)")
    if args.switch_phases is not None and args.switch_time != "uniform":
        raise ValueError(f"--switch-phases={args.switch_phases} is used only with --switch-time uniform (the "
                         "instants of a change inside the round trip; docs/model.md sec. 17)")
    if args.delta is None:
        args.delta = 40.0
    if args.bmax is None:
        args.bmax = 10
    if args.wmax is None:
        args.wmax = 128
    from .analysis import analyze
    from .scenario import Scenario

    model = None
    if args.capacity is not None:
        from ..capacity import load_model

        model = load_model(args.capacity)  # ValueError (one line, exit 2) for a missing or bad file
    sc = Scenario(delta=args.delta, bmax=args.bmax, psi=args.psi, rate_ratio=args.rate_ratio,
                  wmax=args.wmax, feedback=args.feedback, source_rate=args.source_rate,
                  max_states=args.max_states, ack_clock=args.ack_clock, round_trip=args.round_trip,
                  bmax_counts_service=not args.bmax_excludes_service, capacity=model, mcr=args.mcr,
                  tcp=args.tcp, loss_cycle=args.loss_cycle or "paper", switch_time=args.switch_time,
                  **({} if args.switch_phases is None else {"switch_phases": args.switch_phases}),
                  ca_increment=args.ca_increment or "binomial", effcap_m=args.effcap_m, effcap_n=args.effcap_n,
                  silence=args.silence, duplicates=args.duplicates)
    r = analyze(sc, method=args.method, progress=not args.no_progress and sys.stderr.isatty(),
                window_tail=args.window_tail or None)
    if model is None:
        chain = f"psi={sc.psi:g} rate_ratio={sc.rate_ratio:g}"
    else:
        # the normalised levels (the engine's: the peak is 1), not EFFCAP's history states
        chain = (f"capacity={args.capacity} ({model.n_levels} levels "
                 f"{', '.join(f'{c:.4g}' for c in model.levels / max(model.levels))})")
    if sc.feedback == "effcap":   # the history chain's states are not the link's levels (docs/model.md sec. 20)
        chain += (f" effcap M={sc.effcap_m} N={sc.effcap_n} (one sample per round trip; {sc.n_levels} history "
                  "states)")
    text = (
        f"TCP {'alone' if sc.feedback == 'none' else 'over ABR (' + sc.feedback + ')'}: "
        f"delta={sc.delta:g} bmax={sc.bmax}{'' if sc.bmax_counts_service else ' (waiting room, the packet in service not counted)'}"
        f" {chain} wmax={sc.wmax}"
        + (f" source_rate={sc.source_rate:g}" if sc.feedback == "constant" else "")
        + (f" mcr={sc.mcr:g}" if sc.mcr > 0 else "") + f" variant={sc.tcp}"
        + (f" loss_cycle={sc.loss_cycle}" if sc.loss_cycle != "paper" else "")
        + (f" duplicates={sc.duplicates}" if sc.duplicates != "none" else "")
        + (f" switch_time={sc.switch_time} ({sc.switch_phases} phases)" if sc.switch_time != "epoch" else "")
        + (f" ack_clock={sc.ack_clock}" if sc.ack_clock != "at-epoch" else "")
        + (f" round_trip={sc.round_trip} (epoch {sc.epoch:g})" if sc.round_trip != "propagation" else "")
        + (f" ca_increment={sc.ca_increment}" if sc.ca_increment != "binomial" else "") + "\n"
        f"  efficiency optimistic   {r.optimistic:.4f}   (eq. 18 uncapped {r.optimistic_eq18:.4f}"
        f"{', above capacity: quote the capped bound' if r.eq18_above_capacity else ''})\n"
        f"  efficiency conservative {r.conservative:.4f}\n"
        f"  efficiency prediction   {r.prediction:.4f}\n"
        + (f"  losses recovered by fast retransmit {r.fast_recovery_share:.1%} (the rest by timeout)\n"
           if r.fast_recovery_share is not None else "") +
        f"  throughput  {r.throughput_conservative:.4f} .. {r.throughput_optimistic:.4f} packets/time unit "
        f"(mean capacity {r.mean_capacity:.4f})\n"
        f"  occupancy   bottleneck {r.mean_queue:.2f} packets, ABR source buffer {r.mean_source_buffer:.2f} packets; "
        f"mean delay {r.mean_queueing_delay:.2f} + {r.mean_source_delay:.2f} time units (+ delta={sc.delta:g} "
        "propagation)\n"
        f"  chain: {r.n_states} states, {r.nnz} nonzeros, residual {r.residual:.1e} ({r.method}); "
        f"build {r.build_seconds * 1e3:.1f} ms, solve {r.solve_seconds * 1e3:.1f} ms"
        + (f"; window cap {r.scenario['window_solved']} solved for wmax={sc.wmax} (the window spends "
           f"{r.window_cap_share:.1e} of the time near it, docs/model.md sec. 19)"
           if r.scenario.get("window_solved", sc.wmax) != sc.wmax else "")
        + _small_psi_note(sc, model)
    )
    emit(r.to_dict(), args.json, text)
    return 0
