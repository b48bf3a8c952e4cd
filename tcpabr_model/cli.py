"""The ``tcpabr`` command.

Each subcommand lives next to the code it drives (``<module>.register(subparsers)``
adds its parser and sets ``func``).  Any :class:`ValueError` (bad input) or
:class:`~tcpabr_model.errors.ModelError` (untrustworthy computation) is printed as
one line on stderr and the command exits with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from .errors import ModelError

# Modules that contribute subcommands, in the order they appear in ``--help``.
_COMMAND_MODULES = (
    "tcpabr_model.markov.cli",      # analyze
    "tcpabr_model.sim.cli",         # simulate
    "tcpabr_model.closed_forms.cli",  # effcap, formula
    "tcpabr_model.sweep.cli",       # sweep
    "tcpabr_model.reproduce.cli",   # reproduce
    "tcpabr_model.sim.presets_cli", # presets
)


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line and exits 2."""

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tcpabr", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def emit(result: dict, as_json: bool, text: str) -> None:
    """Print ``result`` as JSON (stable keys) or the human-readable ``text``."""
    if as_json:
        print(json.dumps(result, indent=2, sort_keys=True))
    else:
        print(text)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, ModelError) as exc:
        print(f"tcpabr {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. `head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
