"""``tcpabr effcap`` and ``tcpabr formula`` subcommands.

``tcpabr effcap``
    Effective capacity (seed 004 eq. 23) of a two-state chain (``--p01 --p10 --c0 --c1``)
    or of a chain read from files (``--matrix P.npy|csv --capacities c.npy|csv``) at
    ``--delta`` or at the QoS delta ``--epsilon/--bmax``; ``--rate`` inverts (smallest
    delta giving that rate).  JSON keys: ``effective_capacity``, ``delta``,
    ``mean_capacity``, ``min_cycle_mean``, ``lower``, ``upper``, ``method``, ``n_states``,
    and with ``--rate``: ``rate``, ``delta_for_rate``; two-state runs also give
    ``effective_capacity_closed_form``.
``tcpabr formula NAME``
    ``window`` (seed 002 eq. 1), ``cwnd-avg`` (eq. 2), ``atm`` (AAL5 accounting),
    ``fairness`` (Jain index), ``fifo-share``, ``effcap-design`` (M, N rule), ``qos-delta``.
"""

from __future__ import annotations

import argparse
import math
import os

from .._validate import int_arg
from ..cli import emit, is_number


class _TrackedStore(argparse._StoreAction):  # noqa: SLF001 - argparse's own "store"
    """``store`` that also records the flag as given (``args._given``), even at its default."""

    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, values, option_string)
        namespace._given = (*getattr(namespace, "_given", ()), self.dest)


class _TrackedStoreTrue(argparse._StoreTrueAction):  # noqa: SLF001
    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, values, option_string)
        namespace._given = (*getattr(namespace, "_given", ()), self.dest)


def _flags(dests) -> tuple[str, str]:
    """``("--a, --b are", "them")`` for the refusal of flags that a mode does not use."""
    names = ["--" + d.replace("_", "-") for d in dests]
    one = len(names) == 1
    return f"{', '.join(names)} {'is' if one else 'are'}", "it" if one else "them"


def _load_array(path: str, flag: str):
    """A numeric array from ``path`` (.npy, .csv, or whitespace-separated text).

    Every problem (missing or unreadable file, a ragged or non-numeric row) is a
    ``ValueError`` naming the flag, the file and, for text files, the line.
    """
    import numpy as np

    if not os.path.isfile(path):
        why = "it is a folder" if os.path.isdir(path) else "no such file"
        raise ValueError(f"{flag} {path!r} is invalid: {why}")
    if path.endswith(".npy"):
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{flag} {path!r} is invalid: not a readable .npy array ({exc})") from None
        if not np.issubdtype(arr.dtype, np.number):
            raise ValueError(f"{flag} {path!r} is invalid: holds {arr.dtype} values, not numbers")
        return arr.astype(float)
    sep = "," if path.endswith(".csv") else None
    rows, width, first = [], None, 0
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                text = line.split("#", 1)[0].strip()
                if not text:
                    continue
                cells = [c.strip() for c in text.split(sep)]
                try:
                    row = [float(c) for c in cells]
                except ValueError:
                    bad = next(c for c in cells if not is_number(c))
                    raise ValueError(f"{flag} {path!r} is invalid: line {lineno}: {bad!r} is not a number") from None
                if width is None:
                    width, first = len(row), lineno
                elif len(row) != width:
                    raise ValueError(f"{flag} {path!r} is invalid: line {lineno} has {len(row)} values, "
                                     f"line {first} has {width}")
                rows.append(row)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{flag} {path!r} is invalid: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    if not rows:
        raise ValueError(f"{flag} {path!r} is invalid: the file holds no numbers")
    return np.array(rows, dtype=float)


def _check_stochastic(P, path: str) -> None:
    """``--matrix`` entries finite, >= 0, rows summing to 1 (the API's checks, worded for the file)."""
    import numpy as np

    from .modulating_chain import ROW_SUM_TOL

    bad = np.argwhere(~(np.isfinite(P) & (P >= 0)))
    if bad.size:
        i, j = (int(t) for t in bad[0])
        raise ValueError(f"--matrix {path!r} is invalid: row {i + 1}, column {j + 1} holds {float(P[i, j])!r}; "
                         "transition probabilities must be finite and >= 0")
    dev = np.abs(P.sum(axis=1) - 1.0)
    if dev.max() > ROW_SUM_TOL:
        i = int(np.argmax(dev))
        raise ValueError(f"--matrix {path!r} is invalid: row {i + 1} sums to {float(P[i].sum()):.12g}; "
                         f"every row must sum to 1 (to {ROW_SUM_TOL:g})")


def _num(x):
    return None if x is None else (float(x) if not (isinstance(x, float) and math.isinf(x)) else "inf")


def _effcap(args) -> int:
    import numpy as np

    from .chain_effective_capacity import effective_capacity_limits, effective_capacity_solve
    from .qos_exponent import delta_for_rate, qos_delta
    from .two_state_closed_form import effective_capacity_two_state, two_state_matrix

    two_state = args.matrix is None
    chain_flags = [n for n in ("p01", "p10", "c0", "c1") if getattr(args, n) is not None]
    if not two_state and chain_flags:
        named, it = _flags(chain_flags)
        raise ValueError(f"{named} ignored with --matrix (the files give the chain and its "
                         f"capacities): drop {it} or drop --matrix/--capacities")
    if two_state and args.capacities is not None:
        raise ValueError("--capacities is ignored without --matrix: add --matrix or give the two-state "
                         "chain with --p01 --p10 --c0 --c1")
    if two_state:
        missing = [n for n in ("p01", "p10", "c0", "c1") if getattr(args, n) is None]
        if missing:
            raise ValueError(f"{', '.join('--' + m for m in missing)} is invalid: required without --matrix")
        from .._validate import check_real

        for flag in ("c0", "c1"):
            check_real(flag, getattr(args, flag), 0.0)   # finite, >= 0 (a ValueError names --c0/--c1)
        P = two_state_matrix(args.p01, args.p10)
        c = np.array([args.c0, args.c1], dtype=float)
    else:
        if args.capacities is None:
            raise ValueError("--capacities=None is invalid: required with --matrix")
        P = _load_array(args.matrix, "--matrix")
        c = _load_array(args.capacities, "--capacities")
        P = np.atleast_2d(P)
        if c.ndim == 2 and 1 in c.shape:  # one row or one column of capacities
            c = c.ravel()
        if P.ndim != 2 or P.shape[0] != P.shape[1]:
            raise ValueError(f"--matrix {args.matrix!r} is invalid: must hold a square matrix, "
                             f"holds shape {P.shape}")
        if c.ndim != 1 or c.shape[0] != P.shape[0]:
            raise ValueError(f"--capacities {args.capacities!r} is invalid: must hold {P.shape[0]} values "
                             f"(one per state of --matrix), holds shape {c.shape}")
        _check_stochastic(P, args.matrix)
    given = [args.delta is not None, args.epsilon is not None or args.bmax is not None, args.rate is not None]
    if sum(given) != 1:
        raise ValueError("--delta/--epsilon+--bmax/--rate is invalid: give exactly one of them")
    lo_lim, mean = effective_capacity_limits(P, c)
    out = {"n_states": int(len(c)), "mean_capacity": mean, "min_cycle_mean": lo_lim}
    if args.rate is not None:
        delta = delta_for_rate(P, c, args.rate)
        out.update(rate=float(args.rate), delta_for_rate=delta)
    elif args.delta is not None:
        delta = float(args.delta)
    else:
        if args.epsilon is None or args.bmax is None:
            raise ValueError("--epsilon/--bmax is invalid: give both")
        delta = qos_delta(args.epsilon, args.bmax)
        out.update(epsilon=args.epsilon, bmax=args.bmax)
    res = effective_capacity_solve(P, c, delta)
    out.update(
        effective_capacity=res.value,
        delta=_num(delta),
        lower=res.lower,
        upper=res.upper,
        method=res.method,
    )
    if two_state:
        out["effective_capacity_closed_form"] = float(
            effective_capacity_two_state(args.p01, args.p10, args.c0, args.c1, delta)
        )
    text = (
        f"effective capacity Gamma(delta={delta:g} per packet) = {res.value:.10g} packets/slot "
        f"(mean {mean:.6g}, Gamma(inf) {lo_lim:.6g}; {res.method}, {len(c)} states)"
    )
    if args.rate is not None:
        text = f"smallest delta with Gamma(delta) = {args.rate:g} packets/slot: {delta:.10g} per packet\n" + text
    emit(out, args.json, text)
    return 0


def _formula(args) -> int:
    from . import atm as _atm
    from . import estimators as _est
    from . import fairness as _fair
    from . import window as _win
    from .qos_exponent import qos_delta

    name = args.name
    if name == "window":
        v = _win.throughput_from_window(args.cwnd_avg, args.rtt, cap_mbps=args.cap)
        out = {"throughput_mbps": v, "cwnd_avg_bytes": args.cwnd_avg, "rtt_s": args.rtt,
               "units": {"throughput_mbps": "Mbit/s of window bytes", "cwnd_avg_bytes": "bytes", "rtt_s": "s"}}
        text = f"throughput (seed 002 eq. 1) = {v:.6g} Mbps"
        out["capped"] = bool(args.cap is not None and v >= args.cap)   # --cap, not the window, set it (a CLI audit)
        if out["capped"]:
            text += f" (the --cap; the window alone gives {_win.throughput_from_window(args.cwnd_avg, args.rtt):.6g})"
    elif name == "cwnd-avg":
        try:
            v = _win.average_window_linear(args.cwnd_max, args.mss, acks_per_increment=args.acks_per_increment)
        except ValueError as exc:
            if not str(exc).startswith("cwnd_max/mss="):
                raise
            raise ValueError(f"--cwnd-max/--mss={args.cwnd_max!r}/{args.mss!r} is invalid: eq. 2 needs --cwnd-max >= "
                             f"2 * --mss / --acks-per-increment = {2.0 * args.mss / args.acks_per_increment:.10g} "
                             "bytes (at least one round trip from cwnd_max/2 to cwnd_max)") from None
        out = {"cwnd_avg": v, "cwnd_max": args.cwnd_max, "mss": args.mss,
               "units": {"cwnd_avg": "bytes", "cwnd_max": "bytes", "mss": "bytes"}}
        text = f"average window (seed 002 eq. 2) = {v:.6g} bytes"
        if args.rtt is not None:   # its unit only with the value (it was listed without one; a CLI audit)
            out["throughput_mbps"] = _win.throughput_from_window(v, args.rtt)
            out["units"]["throughput_mbps"] = "Mbit/s"
            text += f"; throughput (eq. 1, RTT {args.rtt:g} s) = {out['throughput_mbps']:.6g} Mbps"
    elif name == "atm":
        cells = _atm.cells_per_packet(args.mss)
        out = {
            "mss": args.mss,
            "cells_per_packet": cells,
            "padding_bytes": _atm.padding_bytes(args.mss),
            "tcp_efficiency": _atm.tcp_efficiency(args.mss),
            "tcp_max_throughput": _atm.tcp_max_throughput(args.link_rate, args.mss, sonet=args.sonet),
            "link_rate": args.link_rate,
            "sonet": bool(args.sonet),
        }
        out["units"] = {"mss": "bytes (TCP data per segment)", "padding_bytes": "bytes",
                        "tcp_efficiency": "TCP data bytes per ATM-layer byte",
                        "tcp_max_throughput": "Mbit/s of TCP data", "link_rate": "Mbit/s"}
        out["overhead"] = ("per segment: TCP 20 + IP 20 + LLC/SNAP 8 + AAL5 trailer 8 bytes, padding to a multiple "
                           "of 48; per cell: 5-byte header" + (", STS-3c framing (26/27)" if args.sonet else ""))
        text = (
            f"{cells} cells/packet, efficiency {out['tcp_efficiency']:.4f}, "
            f"TCP-layer max {out['tcp_max_throughput']:.4g} Mbps (link {args.link_rate:g} Mbps, sonet={args.sonet})\n"
            f"  overhead counted: {out['overhead']} ({out['padding_bytes']} pad bytes here); efficiency = TCP data "
            "bytes per ATM-layer byte"
        )
    elif name == "fairness":
        if not args.values:
            raise ValueError("values=[] is invalid: give the throughputs")
        v = _fair.jain_index(args.values)
        out = {"jain_index": v, "n": len(args.values)}
        text = f"Jain fairness index = {v:.6g}"
    elif name == "fifo-share":
        if not args.values:
            raise ValueError("values=[] is invalid: give the buffer occupancies")
        v = _win.fifo_share(args.mu, args.values)
        out = {"shares": [float(x) for x in v], "mu": args.mu}
        text = "FIFO shares: " + ", ".join(f"{x:.6g}" for x in v)
    elif name == "effcap-design":
        args._flag_aliases = {**args._flag_aliases, "delta": "--rtt"}  # the API's delta is --rtt here
        d = _est.effcap_design(args.rtt, args.s, args.k, convention=args.convention)
        out = {"M": d.M, "N": d.N, "k": d.k, "N_range": list(d.N_range), "convention": d.convention}
        text = f"M = {d.M}, N = {d.N} (k = {d.k}; N for k = 8..12: {d.N_range[0]}..{d.N_range[1]})"
    elif name == "qos-delta":
        v = qos_delta(args.epsilon, args.bmax)
        out = {"delta": v, "epsilon": args.epsilon, "bmax": args.bmax}
        text = f"delta = -log(epsilon)/Bmax = {v:.6g} per packet"
    else:  # pragma: no cover - argparse restricts choices
        raise ValueError(f"name={name!r} is invalid")
    out["formula"] = name
    emit(out, args.json, text)
    return 0


def register(subparsers) -> None:
    """Add the ``effcap`` and ``formula`` subcommands."""
    p = subparsers.add_parser(
        "effcap", help="effective capacity of a Markov-modulated link (eq. 23)",
        description="Effective capacity Gamma(delta) (seed 004 eq. 23) of a link whose capacity follows a "
                    "Markov chain: a two-state chain (--p01 --p10 --c0 --c1) or one read from files (--matrix "
                    "--capacities).  Give exactly one of --delta, --epsilon with --bmax (delta = "
                    "-log(epsilon)/bmax), or --rate (the smallest delta with Gamma(delta) = rate).")
    p.add_argument("--p01", type=float, help="P(state 0 -> 1) per slot (two-state chain)")
    p.add_argument("--p10", type=float, help="P(state 1 -> 0) per slot")
    p.add_argument("--c0", type=float, help="packets served per slot in state 0")
    p.add_argument("--c1", type=float, help="packets served per slot in state 1")
    p.add_argument("--matrix", help="transition matrix file (.npy, .csv or whitespace text)")
    p.add_argument("--capacities", help="capacity vector file, packets per slot in each state (with --matrix)")
    p.add_argument("--delta", type=float, help="QoS exponent delta (1/packet); 'inf' allowed")
    p.add_argument("--epsilon", type=float, help="loss target; delta = -log(epsilon)/bmax")
    p.add_argument("--bmax", type=float, help="buffer in packets (with --epsilon)")
    p.add_argument("--rate", type=float, help="invert: smallest delta with Gamma(delta) = rate")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_effcap, _flag_aliases={"c": "--capacities"})

    f = subparsers.add_parser(
        "formula", help="closed-form formulas (window, ATM overhead, fairness, EFFCAP design)",
        description="Evaluate one closed form: window (throughput from the average window, seed 002 eq. 1; "
                    "--cwnd-avg --rtt), cwnd-avg (average window of a linear increase, eq. 2; --cwnd-max "
                    "--mss), atm (AAL5 cells and efficiency of an MSS; --mss), fairness (Jain's index of "
                    "VALUES), fifo-share (each connection's share of a FIFO of rate --mu from its buffer "
                    "occupancy VALUES), effcap-design (EFFCAP M and N from --rtt and --s), qos-delta "
                    "(delta = -log(--epsilon)/--bmax).  A flag the chosen formula does not use is refused.")
    f.add_argument(
        "name", metavar="NAME",
        choices=["window", "cwnd-avg", "atm", "fairness", "fifo-share", "effcap-design", "qos-delta"],
        help="window | cwnd-avg | atm | fairness | fifo-share | effcap-design | qos-delta",
    )
    # default=None: VALUES is optional (argparse lists a "*" positional without a default as required)
    f.add_argument("values", nargs="*", type=float, metavar="VALUES", default=None,
                   help="throughputs (fairness) or buffer occupancies (fifo-share), before or after the flags")
    for key in (None, "store"):                          # record which flags were given (_refuse_unused)
        f.register("action", key, _TrackedStore)
    f.register("action", "store_true", _TrackedStoreTrue)
    f.add_argument("--cwnd-avg", type=float, default=None, help="average window, bytes (window)")
    f.add_argument("--rtt", type=float, default=None, help="RTT in s (window, cwnd-avg) or Delta (effcap-design)")
    f.add_argument("--cap", type=float, default=None, help="cap in Mbps (window)")
    f.add_argument("--cwnd-max", type=float, default=None, help="loss window, bytes (cwnd-avg)")
    f.add_argument("--mss", type=int_arg(1), default=None, help="segment size, bytes")
    f.add_argument("--acks-per-increment", type=float, default=1.0, help="RTTs per MSS increase (2: delayed ACK)")
    f.add_argument("--link-rate", type=float, default=155.52, help="line rate, Mbps (atm)")
    f.add_argument("--sonet", action="store_true", help="apply SONET STS-3c framing 26/27 (atm)")
    f.add_argument("--mu", type=float, default=None, help="total FIFO output rate (fifo-share)")
    f.add_argument("--s", type=float, default=None, help="measurement interval, same unit as --rtt (effcap-design)")
    f.add_argument("--k", type=int_arg(2), default=8, help="memory in RTTs, 8..12 recommended (effcap-design)")
    f.add_argument("--convention", choices=["memory", "count"], default="memory", help="N = (k-1)M or kM")
    f.add_argument("--epsilon", type=float, default=None, help="loss target (qos-delta)")
    f.add_argument("--bmax", type=float, default=None, help="buffer, packets (qos-delta)")
    f.add_argument("--json", action="store_true", help="print the result as JSON")
    # values after options (``fifo-share --mu 10 1 2 3``) join ``values`` (see tcpabr_model.cli.main)
    f.set_defaults(func=_formula_checked, _trailing_values="values", _given=(),
                   _flag_aliases={"cwnd_avg_bytes": "--cwnd-avg", "rtt_s": "--rtt", "cap_mbps": "--cap",
                                  "occupancy": "values", "x": "values"})


_REQUIRED = {
    "window": ("cwnd_avg", "rtt"),
    "cwnd-avg": ("cwnd_max", "mss"),
    "atm": ("mss",),
    "fifo-share": ("mu",),
    "effcap-design": ("rtt", "s"),
    "qos-delta": ("epsilon", "bmax"),
}


#: the flags each formula reads (besides --json); any other flag given is refused
_USES = {
    "window": ("cwnd_avg", "rtt", "cap"),
    "cwnd-avg": ("cwnd_max", "mss", "acks_per_increment", "rtt"),
    "atm": ("mss", "link_rate", "sonet"),
    "fairness": (),
    "fifo-share": ("mu",),
    "effcap-design": ("rtt", "s", "k", "convention"),
    "qos-delta": ("epsilon", "bmax"),
}
_TAKES_VALUES = ("fairness", "fifo-share")


def _refuse_unused(args) -> None:
    """Refuse flags (and VALUES) that the chosen formula would silently ignore."""
    uses = _USES[args.name]
    bad = [d for d in dict.fromkeys(args._given) if d not in uses and d != "json"]
    if bad:
        takes = ", ".join("--" + d.replace("_", "-") for d in uses) or "only VALUES"
        named, it = _flags(bad)
        raise ValueError(f"{named} not used by 'formula {args.name}' (it takes {takes}): drop {it}")
    if args.values and args.name not in _TAKES_VALUES:
        shown = " ".join(f"{v:g}" for v in args.values)
        raise ValueError(f"VALUES ({shown}) are not used by 'formula {args.name}' (only fairness and fifo-share "
                         "take VALUES): drop them")


def _formula_checked(args) -> int:
    if args.values is None:
        args.values = []
    _refuse_unused(args)
    for attr in _REQUIRED.get(args.name, ()):
        if getattr(args, attr) is None:
            raise ValueError(f"--{attr.replace('_', '-')}=None is invalid: required for 'formula {args.name}'")
    return _formula(args)
