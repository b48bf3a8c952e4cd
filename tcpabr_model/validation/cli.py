"""``tcpabr validate``: the cross-validation report of the closed forms, from any folder."""

from __future__ import annotations


def register(sub) -> None:
    """Add the ``validate`` subcommand."""
    from .__main__ import add_arguments

    p = sub.add_parser(
        "validate", help="cross-validate every closed form against an independent computation",
        description="Compare every formula of tcpabr_model.closed_forms (and the Markov analysis) with an "
                    "independent computation (dedicated simulators, exact enumeration or values printed in "
                    "the seed papers); print the relative errors, tolerances and verdicts; exit 1 on a failure.")
    add_arguments(p)
    p.set_defaults(func=_run)


def _run(args) -> int:
    from .__main__ import run

    return run(args)
