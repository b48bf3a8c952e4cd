"""``tcpabr presets`` and ``tcpabr simulate --preset NAME``: the network simulator from the
command line (the ``simulate`` parser lives in :mod:`tcpabr_model.sim.cli`, which calls
:func:`run_preset` when ``--preset`` is given)."""

from __future__ import annotations

import argparse

__all__ = ["register", "handler", "run_preset", "list_presets_text"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``presets`` subcommand."""
    p = subparsers.add_parser("presets", help="list the seeds' network configurations (tcpabr simulate --preset)",
                              description="List the named network configurations of the seed papers.")
    p.add_argument("--filter", default="", help="only names containing this text")
    p.add_argument("--show", metavar="NAME", default=None,
                   help="print one preset's parameters, provenance and paper values")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(func=handler)
    return p


def list_presets_text(filt: str = "") -> str:
    from .catalogue import preset_names

    return "\n".join(n for n in preset_names() if filt in n)


def handler(args) -> int:
    from ...cli import emit
    from .catalogue import preset, preset_names

    if args.show is not None:
        p = preset(args.show)
        d = p.to_dict()
        lines = [f"{p.name}: {p.description}"] + [f"  {k}: {v}" for k, v in p.provenance.items()]
        if p.paper:
            lines.append(f"  paper: {p.paper}")
        emit(d, args.json, "\n".join(lines))
        return 0
    allnames = preset_names()
    names = [n for n in allnames if args.filter in n]
    if not names:   # say so instead of printing nothing (exit 1, like grep: nothing found)
        import sys

        msg = (f"no preset name contains {args.filter!r} ({len(allnames)} presets; "
               "`tcpabr presets` lists them all)")
        if args.json:   # a JSON reader still gets JSON: the empty list and the reason
            emit({"presets": [], "message": msg}, True, "")
        else:
            print(f"tcpabr presets: {msg}", file=sys.stderr)
        return 1
    emit({"presets": names}, args.json, "\n".join(names))
    return 0


def run_preset(args) -> int:
    """``tcpabr simulate --preset NAME [--duration --replications --seed --workers --json]``."""
    from ...cli import emit
    from .catalogue import preset
    from ..driver import simulate_network

    p = preset(args.preset)
    net = p.network
    if args.duration is not None:
        net = net.with_(duration=args.duration)
    reps = args.replications
    if reps is None:
        reps = 10 if net.is_random else 1
    res = simulate_network(net, replications=reps, seed=args.seed, workers=args.workers)
    d = res.to_dict()
    d["preset"] = {"name": p.name, "description": p.description, "provenance": p.provenance, "paper": p.paper}

    def f(e):
        return e.format()

    lines = [f"preset {p.name}: {p.description}",
             f"duration {net.duration:g} s, replications {res.replications}, seed {res.seed}"
             + ("" if net.is_random else " (no randomness in this network: one replication is the answer)"),
             f"efficiency      {f(res.efficiency)} (seed 000 definition; paper {p.paper.get('efficiency', '-')})",
             f"fairness        {f(res.fairness)} (Jain, per connection; paper {p.paper.get('fairness', '-')})"]
    unit = "cells" if net.atm else "packets"     # TCP alone (atm=False): the ports serve whole IP packets
    loss = (f"cell loss ratio {res.cell_loss_ratio.mean:.3e}, frame loss ratio " if net.atm else "packet loss ratio ")
    lines.append(f"{loss}{res.frame_loss_ratio.mean:.3e}, timeouts {res.counters['timeouts']}")
    for i, e in enumerate(res.vc_goodput_bps):
        s = f"  VC {i}: goodput {e.mean / 1e6:.3f}" + (f" +/- {e.half_width / 1e6:.3f}" if e.has_interval else "") \
            + f" Mbit/s{e.clip_note('.3f', 1e-6)}"
        if res.share_ratio is not None:
            s += f", (mu_i/mu)/(r_i/r) {f(res.share_ratio[i])}"
        lines.append(s)
    for i, (qm, qa, qd) in enumerate(zip(res.queue_max, res.queue_mean, res.delay.port_queue)):
        lines.append(f"  port {i}: max queue {qm} {unit}, mean {qa.mean:.1f} {unit}; queue delay mean "
                     f"{1e3 * qd.mean.mean:.4g} ms, p95 {1e3 * qd.p95.mean:.4g} ms")
    lines.extend(res.delay.lines(net.atm))     # per delivered frame, end to end (docs/simulator.md, "Delay")
    if res.abr:    # ABR with RM cells (docs/abr_erica.md)
        from ..abr.kernel_arrays import abr_summary_lines, abr_to_jsonable
        d["abr"] = [abr_to_jsonable(a) for a in res.abr]
        lines.extend(abr_summary_lines(res.abr))
    lines.append(f"speed: {res.cells_simulated:,} {unit} in {res.kernel_seconds:.2f} s = "
                 f"{res.cells_per_second:,.0f} {unit}/s")
    emit(d, args.json, "\n".join(lines))
    return 0
