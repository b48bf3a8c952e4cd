"""``tcpabr simulate``: the cell-level simulator from the command line.

Flags shared with ``tcpabr analyze`` mean the same thing there: ``--feedback``,
``--delta`` (round-trip delay in packet times at the high rate), ``--bmax`` (buffer in
packets), ``--psi``, ``--rate-ratio``, ``--wmax``, ``--json``.  ``--capacity FILE`` (a
K-state model) or ``--capacity-trace TRACE`` (a Mahimahi trace) replaces the two-state
process.  Times specific to the
simulator (``--duration``, ``--warmup``, ``--interval``, ``--feedback-delay``) are in
seconds; the paper's time unit is 5 ms with the default 500-byte packets at 100 kB/s.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from .._validate import int_arg
from .tcp.variants import DEPRECATED_VARIANTS, VARIANTS

__all__ = ["register", "handler"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``simulate`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "simulate", help="cell-level Monte Carlo of TCP over ABR (INSTCAP/EFFCAP) or TCP alone",
        description=__doc__.splitlines()[0])
    p.add_argument("--feedback", choices=("instcap", "effcap", "none", "constant"), default="instcap",
                   help="ABR rate feedback; 'none' is TCP alone; 'constant' holds the ABR source at "
                        "--source-rate (default instcap)")
    p.add_argument("--source-rate", type=float, default=None,
                   help="with --feedback constant: source rate as a fraction of the high rate, in (0, 1]")
    p.add_argument("--mcr", type=float, nargs="+", default=None,
                   help="TM 4.0 minimum cell rate of the INSTCAP/EFFCAP source, a fraction of the high rate (the "
                        "trace's busiest ms with --capacity-trace) in [0, 1], one per connection or one for all: "
                        "the source never sends slower, even after an empty measurement block (default 0, TM "
                        "4.0's default and the paper's source)")
    p.add_argument("--delta", type=float, nargs="+", default=None,
                   help="round-trip propagation delay in packet times, one per connection (default 40)")
    p.add_argument("--rtt", type=float, nargs="+", default=None,
                   help="round-trip propagation delay in seconds, one per connection (instead of --delta; "
                        "handy with --capacity-trace, whose peak rate sets the packet time)")
    p.add_argument("--bmax", type=int_arg(1, 1_000_000), default=10, help="bottleneck buffer in packets, in [1, 1000000] (default 10)")
    p.add_argument("--psi", type=float, default=20.0,
                   help="mean time per capacity state / max(delta), > 0 (default 20)")
    p.add_argument("--rate-ratio", type=float, default=0.5, help="low rate / high rate, in (0, 1] (default 0.5)")
    p.add_argument("--wmax", type=int_arg(1, 1_000_000), default=None,
                   help="maximum TCP window in packets (default 128; with --capacity-trace the window of "
                        "tcpabr analyze --trace, twice the peak pipe plus the buffer: "
                        "trace_study.window_packets on the chain fitted at epoch = the round trip)")
    p.add_argument("--seed", type=int_arg(0), default=0, help="random seed (default 0)")
    p.add_argument("--m", type=int_arg(1), nargs="+", default=None,
                   help="EFFCAP M per connection (default M : Delta = ceil(Delta/s))")
    p.add_argument("--n", type=int_arg(1), nargs="+", default=None,
                   help="EFFCAP N per connection (default N : 8 Delta = 7 ceil(Delta/s))")
    p.add_argument("--k", type=float, default=None, help="EFFCAP N : k Delta (alternative to --n)")
    p.add_argument("--duration", type=float, default=None,
                   help="measured simulated time per replication, seconds (default 2000; with --preset "
                        "the preset's duration)")
    p.add_argument("--preset", default=None,
                   help="simulate a named network configuration of the seed papers (tcpabr presets lists "
                        "them); uses --duration, --replications, --seed, --workers, --json")
    p.add_argument("--list-presets", action="store_true", help="list the preset names and exit")
    p.add_argument("--warmup", type=float, default=20.0, help="discarded warm-up, seconds (default 20)")
    p.add_argument("--replications", type=int_arg(1, 100_000), default=None,
                   help="independent replications (default 10; with --preset, 1 for a network without "
                        "randomness)")
    p.add_argument("--workers", type=int_arg(1, 256), default=1,
                   help="processes running replications in parallel; results do not depend on it (default 1)")
    p.add_argument("--ci", choices=("replications", "batch"), default="replications",
                   help="confidence intervals from replications or batch means")
    p.add_argument("--batches", type=int_arg(2, 100_000), default=20, help="batches per run with --ci batch (default 20)")
    p.add_argument("--target-halfwidth", type=float, default=None,
                   help="add replications until the 95%% half-width / efficiency is below this")
    p.add_argument("--capacity-mode", choices=("continuous", "embedded"), default="continuous",
                   help="exponential sojourns, or changes only at multiples of Delta (the analysis)")
    p.add_argument("--capacity", metavar="FILE", default=None,
                   help="K-state capacity model (JSON/TOML written by tcpabr_model.capacity.save_model) "
                        "instead of the two-state process (--psi, --rate-ratio, --capacity-mode)")
    p.add_argument("--capacity-trace", metavar="TRACE", default=None,
                   help="Mahimahi trace replayed as the bottleneck's service, repeated with its period; "
                        "its busiest millisecond is the high rate, so --delta is in packet times at that rate")
    p.add_argument("--segment-bytes", type=int_arg(1, 65535), default=None, metavar="N",
                   help="TCP segment payload in bytes; the IP packet is N + 40 (TCP/IP headers).  Default: with "
                        "--capacity-trace 1460, one 1500-byte IP packet per Mahimahi delivery opportunity (as "
                        "the trace study, docs/traces.md); with a --capacity model that states packet_bytes, "
                        "packet_bytes - 40; otherwise 500, the paper's packets")
    p.add_argument("--capacity-offset", type=float, default=None,
                   help="with --capacity-trace: start this many seconds into the trace (default: a random "
                        "ms per replication)")
    p.add_argument("--interval", type=float, default=None,
                   help="measurement/feedback interval s, seconds (default 0.03; with --capacity-trace, "
                        "--feedback instcap, one --rtt and no --feedback-delay, the round trip fed back at once: "
                        "the analysis' INSTCAP, docs/model.md sec. 16); with --feedback none only the sample "
                        "spacing of --trace and --ci batch")
    p.add_argument("--feedback-delay", type=float, nargs="+", default=None,
                   help="feedback delay per connection, seconds (default one round-trip delay)")
    p.add_argument("--variant", choices=VARIANTS + tuple(DEPRECATED_VARIANTS), default="timeout-only",
                   help="TCP variant (default timeout-only, the paper's model); 'no-fast-retransmit' is "
                        "the deprecated name of timeout-only")
    p.add_argument("--rto", choices=("fixed", "estimator"), default="fixed",
                   help="RTO fixed at 2 x RTT (testbed) or RFC 6298 estimator (minimum --rto-min)")
    p.add_argument("--granularity", type=float, default=0.01, help="timer granularity, s (estimator)")
    p.add_argument("--rto-min", type=float, default=None, metavar="SECONDS",
                   help="minimum RTO of --rto estimator, seconds (default 1, RFC 6298 (2.4))")
    p.add_argument("--delayed-ack", action="store_true", help="acknowledge every second segment")
    p.add_argument("--discard", choices=("ppd", "epd"), default="ppd",
                   help="partial packet discard, or early packet discard as well")
    p.add_argument("--host-rate-factor", type=float, default=10.0,
                   help="TCP alone: host link rate / high bottleneck rate (default 10)")
    p.add_argument("--trace", metavar="PATH", default=None,
                   help="write the first replication's series (window, queue, source rate, ...) "
                        "sampled every s to PATH as .npz")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=handler, _defaults={a.dest: a.default for a in p._actions if a.dest != "help"},
                   _flag_aliases={"payload_bytes": "--segment-bytes", "initial_rate": "--source-rate",
                                  "target_rel_halfwidth": "--target-halfwidth"})
    return p


#: TCP/IP header bytes of the scenario's packets (Scenario.tcpip_header_bytes' default)
_TCPIP_BYTES = 40

# flags that --preset uses; every other simulate flag describes the single-bottleneck scenario
_PRESET_FLAGS = {"preset", "duration", "replications", "seed", "workers", "json", "list_presets"}


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _given(args) -> list:
    """Destinations whose value differs from the parser's default (flags the user gave)."""
    d = getattr(args, "_defaults", {})
    return [k for k, v in d.items() if getattr(args, k, v) != v]


def _refuse_ignored(args, feedbacks=None) -> None:
    """Refuse flags the chosen mode would silently ignore; ``feedbacks``: those the command
    runs (default ``args.feedback``; ``tcpabr design`` runs TCP alone and ABR)."""
    given = _given(args)
    if args.preset is not None:
        bad = [_flag(k) for k in given if k not in _PRESET_FLAGS]
        if bad:
            raise ValueError(f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} ignored with --preset (the "
                             "preset fixes the network): with --preset use only --duration, --replications, "
                             "--seed, --workers, --json")
        return
    if args.capacity is not None and args.capacity_trace is not None:
        raise ValueError("--capacity and --capacity-trace are exclusive: give one of them")
    if args.capacity is not None or args.capacity_trace is not None:
        which = "--capacity" if args.capacity is not None else "--capacity-trace"
        bad = [_flag(k) for k in given if k in ("psi", "rate_ratio", "capacity_mode")]
        if bad:
            raise ValueError(f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} ignored with {which} (the "
                             "file gives the capacity process): drop it")
    feedbacks = (args.feedback,) if feedbacks is None else tuple(feedbacks)
    abr = any(f != "none" for f in feedbacks)
    no_abr = ("ABR feedback", "--feedback instcap, effcap or constant")
    # (flag, used, without what it is ignored, what to add)
    rules = (("host_rate_factor", "none" in feedbacks, "--feedback none (TCP alone)", "--feedback none"),
             # TCP alone measures nothing: s only spaces the samples of --trace and --ci batch
             ("interval", abr or args.trace is not None or args.ci == "batch",
              "ABR feedback, --trace or --ci batch", no_abr[1]),
             ("feedback_delay", abr, *no_abr),
             ("capacity_offset", args.capacity_trace is not None, "--capacity-trace", "--capacity-trace"),
             ("batches", args.ci == "batch", "--ci batch", "--ci batch"),
             ("granularity", args.rto == "estimator", "--rto estimator", "--rto estimator"),
             ("rto_min", args.rto == "estimator", "--rto estimator", "--rto estimator"))
    for dest, applies, needs, fix in rules:
        if dest in given and not applies:
            raise ValueError(f"{_flag(dest)} is ignored without {needs}: drop it or add {fix}")


def _trace_path(path: str) -> str:
    """The ``--trace`` file (``.npz`` appended when missing, as numpy does), its folder created and
    checked writable before simulating (like ``sweep --out``)."""
    from ..runtime.paths import check_output_file

    if not path.lower().endswith(".npz"):
        path += ".npz"
    check_output_file(path, "--trace")
    return path


def _progress_bar(total: int, est_seconds: float):
    """A tqdm bar on stderr for runs expected to take more than a few seconds on a terminal."""
    if est_seconds < 3.0 or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="replication", file=sys.stderr, leave=False)


def _segment_bytes(args, capacity) -> int:
    """``--segment-bytes``, or its default: one IP packet (segment + 40 B of TCP/IP headers) per
    packet of the capacity (a trace's 1500-byte opportunity: 1460), else the paper's 500."""
    from .scenario import capacity_packet_bytes

    if args.segment_bytes is not None:
        return args.segment_bytes
    pkt = capacity_packet_bytes(capacity)
    if pkt is None:
        return 500
    if pkt <= _TCPIP_BYTES:
        raise ValueError(f"--segment-bytes is needed: the capacity's packet ({pkt} B) is not larger than the "
                         f"{_TCPIP_BYTES} B of TCP/IP headers, so the default segment (packet - {_TCPIP_BYTES}) "
                         "is empty")
    return pkt - _TCPIP_BYTES


def _trace_window(trace, rtt: float, bmax: int) -> int:
    """The window ``tcpabr analyze --trace`` takes by default: :func:`tcpabr_model.trace_study.window_packets`
    on the peak level of the chain fitted at epoch = ``rtt`` (``fit_for_rtt``), so that both
    commands describe one system."""
    import numpy as np

    from .._validate import check_int
    from ..trace_study import fit_for_rtt, window_packets

    bmax = check_int("bmax", bmax, 1, 1_000_000)
    try:
        peak = float(np.max(fit_for_rtt(trace, rtt).model.levels))
    except ValueError as e:
        raise ValueError(f"--wmax is needed here: the default window (tcpabr analyze --trace's, from the chain "
                         f"fitted at epoch = the round trip {rtt:.6g} s) cannot be computed: {e}") from None
    return window_packets(peak, rtt, bmax)


def _variant(name: str) -> str:
    """The variant's name; an old spelling prints one warning line on stderr (``tcpabr
    simulate: warning: ...``, the CLI's format for warnings) and is replaced."""
    new = DEPRECATED_VARIANTS.get(name)
    if new is None:
        return name
    # FutureWarning: shown whatever the caller's warning filters (a DeprecationWarning raised
    # inside the package is hidden by Python's defaults)
    warnings.warn(f"--variant {name} is deprecated: use --variant {new}", FutureWarning, stacklevel=2)
    return new


def _scenario(args):
    from ..capacity import Trace as LinkTrace
    from .feedback import n_from_k
    from .scenario import MAX_RTT_SECONDS, Scenario, TcpConfig

    kw = {}
    if args.feedback == "effcap":
        if args.m is not None:
            kw["m"] = tuple(args.m) if len(args.m) > 1 else args.m[0]
        if args.n is not None and args.k is not None:
            raise ValueError("--n and --k are exclusive: give one of them")
        if args.n is not None:
            kw["n"] = tuple(args.n) if len(args.n) > 1 else args.n[0]
    elif args.m is not None or args.n is not None or args.k is not None:
        raise ValueError(f"--m/--n/--k apply to --feedback effcap only (got --feedback {args.feedback})")
    if args.feedback == "constant":
        if args.source_rate is None:
            raise ValueError("source_rate=None is invalid: --feedback constant needs --source-rate in (0, 1]")
        kw["initial_rate"] = args.source_rate
    elif args.source_rate is not None:
        raise ValueError(f"source_rate={args.source_rate!r} is invalid: only used with --feedback constant")
    if args.mcr is not None:
        if args.feedback not in ("instcap", "effcap"):
            raise ValueError(f"--mcr applies to --feedback instcap or effcap only (got --feedback {args.feedback})")
        kw["mcr"] = tuple(args.mcr) if len(args.mcr) > 1 else args.mcr[0]
    if args.feedback_delay is not None:
        kw["feedback_delay"] = tuple(args.feedback_delay) if len(args.feedback_delay) > 1 else args.feedback_delay[0]
    if args.capacity is not None:
        from ..capacity import load_model
        kw["capacity"] = load_model(args.capacity)
    elif args.capacity_trace is not None:
        from ..capacity import read_trace
        kw["capacity"] = read_trace(args.capacity_trace)
        if args.capacity_offset is not None:
            kw["capacity_offset"] = args.capacity_offset
    kw["payload_bytes"] = _segment_bytes(args, kw.get("capacity"))
    kw["duration"] = args.duration if args.duration is not None else 2000.0
    delta_given = args.delta is not None     # --delta 40 is a choice too, even at the default
    if not delta_given:
        args.delta = [40.0]
    delta = tuple(args.delta) if len(args.delta) > 1 else args.delta[0]
    if args.rtt is not None:
        if delta_given:
            raise ValueError("--rtt and --delta are exclusive: give the round trip in seconds or in packet times")
        # seconds -> packet times at the high (peak) rate of this capacity and packet
        unit = Scenario(feedback=args.feedback, **kw).time_unit
        for i, v in enumerate(args.rtt):   # the physical limit of Scenario.from_normalized
            if not 0.0 < v <= MAX_RTT_SECONDS:
                entry = f" (entry {i})" if len(args.rtt) > 1 else ""
                raise ValueError(f"--rtt={v!r}{entry} is invalid: must be in (0, {MAX_RTT_SECONDS:g}] seconds")
        vals = [v / unit for v in args.rtt]
        delta = tuple(vals) if len(vals) > 1 else vals[0]
    wmax = args.wmax
    if wmax is None:
        wmax = 128
        if isinstance(kw.get("capacity"), LinkTrace):
            rtt = max(args.rtt) if args.rtt is not None else max(args.delta) * Scenario(
                feedback=args.feedback, **kw).time_unit
            if not 0.001 <= rtt <= 100.0:    # the window's fit needs a round trip in range: name the flag that set it
                flag, given = ("--rtt", args.rtt) if args.rtt is not None else ("--delta", args.delta)
                given = given[0] if len(given) == 1 else list(given)
                raise ValueError(f"{flag}={given!r} is invalid here: its round trip {rtt:.6g} s must be in [0.001, "
                                 "100] s for the default window (tcpabr analyze --trace's fit at the round trip), or "
                                 "give --wmax")
            wmax = _trace_window(kw["capacity"], rtt, args.bmax)
    interval = args.interval
    if interval is None:
        interval = 0.03
        if (isinstance(kw.get("capacity"), LinkTrace) and args.feedback == "instcap" and args.feedback_delay is None
                and args.rtt is not None and len(args.rtt) == 1):
            # the study's and the analysis' INSTCAP: each round trip measured, applied over the next
            from ..trace_study import feedback_timing

            t = feedback_timing("instcap", args.rtt[0])
            interval, kw["feedback_delay"] = t["interval"], t["feedback_delay"]
    rto_min = {} if args.rto_min is None else {"rto_min": args.rto_min}
    tcp = TcpConfig(variant=_variant(args.variant), rto=args.rto, granularity=args.granularity, wmax=wmax,
                    delayed_ack=args.delayed_ack, **rto_min)
    try:
        sc = Scenario.from_normalized(delta=delta, bmax=args.bmax, psi=args.psi, rate_ratio=args.rate_ratio,
                                      feedback=args.feedback, tcp=tcp, warmup=args.warmup,
                                      capacity_mode=args.capacity_mode, interval=interval, discard=args.discard,
                                      host_rate_factor=args.host_rate_factor, **kw)
    except ValueError as exc:    # the round trip in seconds comes from --delta: name the flag the user gave
        if delta_given and str(exc).startswith("rtt"):
            raise ValueError(f"--delta={args.delta[0] if len(args.delta) == 1 else list(args.delta)} is invalid: the "
                             f"round trip it gives in seconds is out of range ({exc})") from None
        raise
    if args.k is not None:
        sc = sc.with_(n=tuple(n_from_k(args.k, d, sc.interval) for d in sc.rtt))
    return sc


def handler(args) -> int:
    """Run ``tcpabr simulate``; returns the exit status."""
    from ..cli import emit
    from .driver import estimated_kernel_seconds, simulate, target_reached

    _refuse_ignored(args)
    if args.list_presets:
        from .presets.cli import list_presets_text
        print(list_presets_text())
        return 0
    if args.preset is not None:
        from .presets.cli import run_preset
        return run_preset(args)
    if args.trace is not None:
        args.trace = _trace_path(args.trace)
    sc = _scenario(args)
    rtt = max(sc.rtt)
    if sc.duration < rtt:     # a measurement shorter than one round trip: no estimate to trust (nan delays)
        raise ValueError(f"--duration={sc.duration:g} s is invalid: shorter than the round trip ({rtt:.4g} s): "
                         f"give --duration >= {rtt:.4g} s, better many round trips")
    reps = 10 if args.replications is None else args.replications
    bar = _progress_bar(reps, estimated_kernel_seconds(sc) * reps / max(1, args.workers))
    try:
        res = simulate(sc, replications=reps, seed=args.seed, ci_method=args.ci, workers=args.workers,
                       batches=args.batches, target_rel_halfwidth=args.target_halfwidth,
                       trace=args.trace is not None, progress=None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()
    d = res.to_dict()
    if args.trace is not None:
        from ..runtime.atomic import save_npz
        save_npz(args.trace, **{k: getattr(res.trace, k) for k in res.trace.__dataclass_fields__})
        d["trace_file"] = args.trace
    lines = [_header(args, sc, res)] + _efficiency_lines(sc, res, d)
    if args.trace is not None:
        lines.append(f"trace written to {args.trace}")
    if args.target_halfwidth is not None:
        e = res.efficiency      # the estimate the driver's stopping rule reads
        d["target_met"] = bool(target_reached(e, args.target_halfwidth))
        if not d["target_met"]:
            rel = e.half_width / abs(e.mean) if e.has_interval and e.mean else float("inf")
            print(f"tcpabr simulate: warning: --target-halfwidth {args.target_halfwidth:g} not reached: "
                  f"{res.replications} replications (the cap: 1000, or --replications when larger) give a relative "
                  f"half-width of {rel:.3g}; lengthen --duration", file=sys.stderr)
    if sc.n_connections > 1:
        lines.append(f"Jain fairness   {res.fairness.format()}")
    atm = sc.feedback != "none"     # TCP alone: the link serves whole IP packets, no cells (JSON keys keep "cell")
    if atm:
        lines.append(f"cell loss ratio {res.cell_loss_ratio.mean:.3e}, frame loss ratio "
                     f"{res.frame_loss_ratio.mean:.3e}, timeouts {res.counters['timeouts']}")
    else:
        lines.append(f"packet loss ratio {res.frame_loss_ratio.mean:.3e}, timeouts {res.counters['timeouts']}")
    lines.extend(res.delay.lines(atm))     # per delivered segment (docs/simulator.md, "Delay")
    unit = "cells" if atm else "packets"
    lines.append(f"speed: {res.cells_simulated:,} {unit} in {res.kernel_seconds:.2f} s = "
                 f"{res.cells_per_second:,.0f} {unit}/s")
    emit(d, args.json, "\n".join(lines))
    return 0


def _header(args, sc, res) -> str:
    """The first line: what was simulated, in the user's units."""
    if args.rtt is None:
        delay = f"delta={list(args.delta)}"
    else:
        delay = f"rtt={[round(r, 6) for r in sc.rtt]} s (delta={[round(r / sc.time_unit, 4) for r in sc.rtt]})"
    if sc.capacity is None:     # the paper's two-state link
        what = f"psi={sc.psi:g} rate_ratio={sc.rate_ratio:g} wmax={sc.tcp.wmax}"
    elif sc.capacity_kind == "trace":
        t = sc.capacity
        what = (f"capacity-trace={t.name} (mean {t.mean_bits_per_second * 1e-6:.4g} Mbit/s = {t.mean_rate:.1f} "
                f"packets/s of {t.packet_bytes} B; peak {sc.high_rate:.6g} B/s of payload)")
    else:
        what = f"capacity={args.capacity} ({sc.capacity.n_levels} levels, {sc.capacity.time} time)"
    if sc.capacity is not None:
        what += f" segment={sc.payload_bytes} B (IP packet {sc.ip_packet_bytes} B) wmax={sc.tcp.wmax}"
    if any(sc.mcr):
        what += (f" MCR={list(sc.mcr)} of the high rate ({[round(x * sc.high_rate, 1) for x in sc.mcr]} B/s of "
                 "payload)")
    if sc.feedback == "constant":
        what += f" source_rate={sc.initial_rate:g}"
    if sc.feedback in ("instcap", "effcap"):
        what += f" s={sc.interval:g} s feedback_delay={[round(x, 6) for x in sc.feedback_delay]} s"
    mn = f" M={list(sc.m)} N={list(sc.n)}" if sc.feedback != "none" else ""     # EFFCAP's counts
    return (f"feedback={sc.feedback} {delay} bmax={sc.buffer_packets} {what}{mn} "
            f"duration={sc.duration:g} s warmup={sc.warmup:g} s replications={res.replications} seed={res.seed}")


def _scaled(e, k: float):
    """An estimate of ``k`` times the quantity (exact: the replications are scaled alike)."""
    from ..stats import Estimate

    return Estimate(e.mean * k, e.half_width * k, e.low * k, e.high * k, e.n, e.level,
                    tuple(None if v is None else v * k for v in e.limits))


def _efficiency_lines(sc, res, d: dict) -> list:
    """The efficiency lines, and the same definition in ``d`` (the JSON).

    A capacity counted in packets of a stated size (a trace, a model with ``packet_bytes``)
    gets the analysis' efficiency as its headline: packets delivered / the capacity in
    packets over the measured window (``efficiency_wire``; the ATM cell tax is not charged),
    the efficiency over the trace's (model's) mean capacity; Section V's byte count stays as
    ``efficiency_ip_bytes``.  Otherwise the headline is Section V's.
    """
    from .scenario import capacity_packet_bytes

    e = res.efficiency
    ceiling = sc.overhead_factor if sc.feedback != "none" else 1.0
    section_v = f"TCP/IP bytes delivered / capacity in wire bytes, Section V; ceiling {ceiling:.4f}"
    pkt = capacity_packet_bytes(sc.capacity)
    if pkt is None:
        d["efficiency_definition"] = section_v
        lines = [f"efficiency      {e.format()} ({'95% CI; ' if e.has_interval else ''}ceiling {ceiling:.4f})",
                 f"efficiency_wire {res.efficiency_wire.format()}"]
        for i, (ec, gp) in enumerate(zip(res.per_connection_efficiency, res.goodput_bps)):
            lines.append(f"  connection {i}: efficiency {ec.format()}, goodput {gp.mean:.1f} B/s of TCP payload")
        return lines
    whose = "trace's" if sc.capacity_kind == "trace" else "model's"
    atm = sc.feedback != "none"
    wire = sc.frame_wire_bytes if atm else sc.ip_packet_bytes
    unit = (f"packets delivered / the {whose} capacity in packets over the measured window: the efficiency "
            f"over the {whose} mean capacity (a packet is one {sc.ip_packet_bytes}-byte IP packet, {wire} B on "
            f"the link{', the ATM cell tax not charged' if atm else ''}; the {whose} capacity comes in "
            f"{pkt}-byte packets)")
    k = wire / sc.ip_packet_bytes
    per = [_scaled(ec, k) for ec in res.per_connection_efficiency]
    d["efficiency_ip_bytes"] = d["efficiency"]
    d["efficiency"] = dict(d["efficiency_wire"])
    d["per_connection_efficiency"] = [x.to_dict() for x in per]
    d["efficiency_definition"] = unit
    ci = " (95% CI)" if res.efficiency_wire.has_interval else ""
    lines = [f"efficiency      {res.efficiency_wire.format()}{ci} = {unit}",
             f"efficiency_ip_bytes {e.format()} ({section_v})"]
    for i, (ec, gp) in enumerate(zip(per, res.goodput_bps)):
        lines.append(f"  connection {i}: efficiency {ec.format()}, goodput {gp.mean / sc.payload_bytes:.1f} "
                     f"packets/s ({gp.mean * 8e-6:.4g} Mbit/s of payload)")
    return lines
