"""The tcpabr command: analytical models and a cell-level simulator of TCP over ATM/ABR.

Each subcommand lives next to the code it drives (``<module>.register(subparsers)``
adds its parser and sets ``func``).  Any :class:`ValueError` (bad input) or
:class:`~tcpabr_model.errors.ModelError` (untrustworthy computation) is printed as
one line on stderr and the command exits with status 2; an :class:`OSError` (a result
file that cannot be written: full disk, read-only folder) as one line naming the file,
exit status 1; never a traceback.  Any other exception is a defect of the toolkit: the
command writes a fault report (:mod:`tcpabr_model.runtime.fault`: the traceback, the command
and the versions) and prints one line naming it, exit status 70 (``TCPABR_DEBUG=1``: the
traceback instead); a :class:`MemoryError` is one line, exit status 1.  Only
the module of the subcommand being run is imported (the others only for the
top-level ``--help``), so that a usage error is reported before heavy imports.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import re
import sys
import warnings

from .errors import ModelError

# Modules that contribute subcommands, in the order they appear in ``--help``.
_COMMAND_MODULES = (
    "tcpabr_model.markov.cli",      # analyze
    "tcpabr_model.sim.cli",         # simulate
    "tcpabr_model.closed_forms.cli",  # effcap, formula
    "tcpabr_model.sweep.cli",       # sweep
    "tcpabr_model.reproduce.cli",   # reproduce
    "tcpabr_model.plot.cli",        # plot
    "tcpabr_model.validation.cli",  # validate
    "tcpabr_model.sim.presets.cli",  # presets
    "tcpabr_model.capacity.cli",    # trace fit
    "tcpabr_model.design.cli",      # design
)

# Which module registers which subcommand (to import only that one for a run).
_COMMANDS = {
    "analyze": "tcpabr_model.markov.cli",
    "simulate": "tcpabr_model.sim.cli",
    "effcap": "tcpabr_model.closed_forms.cli",
    "formula": "tcpabr_model.closed_forms.cli",
    "sweep": "tcpabr_model.sweep.cli",
    "reproduce": "tcpabr_model.reproduce.cli",
    "plot": "tcpabr_model.plot.cli",
    "validate": "tcpabr_model.validation.cli",
    "presets": "tcpabr_model.sim.presets.cli",
    "design": "tcpabr_model.design.cli",
}

# reStructuredText roles and literals in docstrings reused as help texts.
_RST_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|obj|exc|ref):`~?(?:[\w.]*\.)?([^`]+)`")
_RST_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(text: str) -> str:
    """``text`` without reStructuredText markup (roles and double-backquote literals)."""
    return _RST_LITERAL.sub(r"\1", _RST_ROLE.sub(r"\1", text))


class HelpFormatter(argparse.HelpFormatter):
    """Help without reStructuredText markup, with each flag's default.

    Descriptions are wrapped paragraph by paragraph (blank lines kept; indented lines,
    such as examples, kept as written).  The default is appended as ``(default: X)``
    unless the help text already names it or it is None, False or empty (flags that
    are off or unset by default).
    """

    def _fill_text(self, text, width, indent):
        import textwrap

        out = []
        for para in plain_text(text).split("\n\n"):
            if any(line.startswith(" ") for line in para.splitlines()):
                out.append("\n".join(indent + line for line in para.splitlines()))
            else:
                out.append(textwrap.fill(" ".join(para.split()), width, initial_indent=indent,
                                         subsequent_indent=indent))
        return "\n\n".join(out)

    def _expand_help(self, action):
        return plain_text(super()._expand_help(action))

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if ("default" in text.lower() or default is None or default is False or default == []
                or default is argparse.SUPPRESS or not action.option_strings):
            return text
        if isinstance(default, (list, tuple)):
            shown = " ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in default)
        elif isinstance(default, float):
            shown = f"{default:g}"
        else:
            shown = "%(default)s"
        return f"{text} (default: {shown})" if text else f"default: {shown}"


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line and exits 2; plain-text help with defaults."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def _package_version() -> str:
    from . import __version__

    return __version__


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``tcpabr`` parser; with ``command``, only that subcommand's module is imported."""
    parser = _Parser(prog="tcpabr", description=__doc__.split("\n\n")[0].replace("\n", " "),
                     epilog="Run 'tcpabr COMMAND --help' for a command's flags.")
    parser.add_argument("--version", action="version", version=f"tcpabr {_package_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    modules = list(_COMMAND_MODULES)
    if command == "":  # --version: no subcommand needed
        modules = []
    elif command is not None and _COMMANDS.get(command) in modules:
        modules = [_COMMANDS[command]]
    for name in modules:
        importlib.import_module(name).register(sub)
    return parser


def jsonable(value):
    """``value`` as plain JSON types: numpy scalars/arrays, tuples, paths; NaN/inf as None."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy scalar or array
        return jsonable(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def dumps(result) -> str:
    """The one JSON layout of every command: an object, sorted keys, indent 2, full precision.

    Floats are written with Python's shortest round-trip ``repr`` (17 significant digits
    where needed, never cut); NaN and infinities become ``null`` (strict JSON).
    """
    return json.dumps(jsonable(result), indent=2, sort_keys=True, allow_nan=False)


def emit(result: dict, as_json: bool, text: str) -> None:
    """Print ``result`` as JSON (:func:`dumps`) or the human-readable ``text``."""
    if as_json:
        print(dumps(result))
    else:
        print(text)


def _flag_for(parser: argparse.ArgumentParser, dest: str) -> str | None:
    for action in parser._actions:  # noqa: SLF001 - argparse has no public accessor
        if action.dest == dest and action.option_strings:
            return max(action.option_strings, key=len)
    return None


_PARAM = re.compile(r"^([A-Za-z_]\w*(?:/[A-Za-z_]\w*)*)(?:\[(\d+)\])?(?==)")


_INNER = re.compile(r"(^|\bwith |\bgive |\bor )([a-z_][a-z0-9_]*)=('([^']*)'|([^\s,;:()']+))(?! is invalid)")


def _inner_flags(text: str, parser, aliases: dict | None) -> str:
    """``name='value'`` as a condition or advice further inside a message (``with loss_cycle='paper'``,
    ``give silence='epochs'``, ``or duplicates='none'``, or opening it) as the flag and value a user types
    (``--loss-cycle paper``), where ``name`` is a flag's parameter; a nested ``name=value is invalid`` and
    descriptive lists (``(delta=40, bmax=10)``) keep the API's form (a CLI audit, Nov 29)."""
    def flag(m):
        name = m.group(2)
        f = (aliases or {}).get(name) or (_flag_for(parser, name) if parser is not None else None)
        if not f or not f.startswith("--"):
            return m.group(0)
        return f"{m.group(1)}{f} {m.group(4) if m.group(4) is not None else m.group(5)}"
    return _INNER.sub(flag, text)


def user_message(message: str, parser: argparse.ArgumentParser | None, aliases: dict | None = None) -> str:
    """``message`` with a leading API parameter name (``bmax=...``) replaced by its flag (``--bmax``);
    an entry of a list parameter (``feedback_delay[0]=...``) keeps its index in words; a flag not given
    (``--source-rate=None is invalid: ...``) is "missing"; parameters further in as flags
    (:func:`_inner_flags`)."""
    m = _PARAM.match(message)
    flags = []
    for name in (m.group(1).split("/") if m else ()):
        flag = (aliases or {}).get(name) or (_flag_for(parser, name) if parser is not None else None)
        if not flag:
            return message
        flags.append(flag)
    if m:
        rest = message[m.end():]
        if m.group(2) is not None:   # one entry of a per-connection list: feedback_delay[0]=...
            value, sep, tail = rest.partition(" is invalid")
            rest = value + f" (entry {m.group(2)})" + sep + tail
        message = "/".join(flags) + rest
    gone = re.match(r"^(--[\w/-]+)=None is invalid: ", message)    # a flag the command needs was not given
    if gone:
        return f"{gone.group(1)} is missing: " + _inner_flags(message[gone.end():], parser, aliases)
    head, sep, tail = message.partition(" is invalid")
    return head + sep + _inner_flags(tail, parser, aliases) if sep else _inner_flags(message, parser, aliases)


def _subparser(parser: argparse.ArgumentParser, command: str):
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return action.choices.get(command)
    return None


def _active_parser(sub, args):
    """The innermost parser that parsed ``args`` (``trace fit`` below ``trace``), whose flags name the error."""
    while sub is not None:
        nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]  # noqa: SLF001
        if not nested or getattr(args, nested[0].dest, None) not in nested[0].choices:
            return sub
        sub = nested[0].choices[getattr(args, nested[0].dest)]
    return sub


def _command_of(argv: list[str]) -> str | None:
    for a in argv:
        if not a.startswith("-"):
            return a
        if a == "--version":
            return ""
        if a in ("-h", "--help"):
            return None
    return None


@contextlib.contextmanager
def _one_line_warnings(command: str):
    """Warnings (e.g. a discarded cache entry) as one line each: ``tcpabr CMD: warning: ...``."""
    old = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"tcpabr {command}: warning: {' '.join(str(message).split())}", file=sys.stderr)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = old


def is_number(text: str) -> bool:
    """Whether ``text`` parses as a float."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def os_error_line(exc: OSError) -> str:
    """One line for an :class:`OSError`: the message of a
    :class:`~tcpabr_model.runtime.atomic.OutputError` (``cannot write PATH: reason``), else the
    reason and the file(s) it names."""
    from .runtime.atomic import OutputError

    if isinstance(exc, OutputError):
        return " ".join(str(exc).split())
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [f for f in (exc.filename, exc.filename2) if f is not None]
    return " ".join((f"{reason}: {' -> '.join(map(str, names))}" if names else reason).split())


def main(argv: list[str] | None = None) -> int:
    as_program = argv is None        # the console script or ``python -m tcpabr_model``, not a caller's argv
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    args, extra = parser.parse_known_args(argv)
    sub = _active_parser(_subparser(parser, args.command), args)
    prog = sub.prog if sub is not None else f"tcpabr {args.command}"   # "tcpabr trace fit"
    if extra:
        # values given after options (``formula fifo-share --mu 10 1 2 3``) belong to the
        # subcommand's positional list, where it declares one (``_trailing_values``)
        dest = getattr(args, "_trailing_values", None)
        unknown = [x for x in extra if dest is None or not is_number(x)]
        if unknown:
            (sub or parser).error(f"unrecognized arguments: {' '.join(unknown)}")
        getattr(args, dest).extend(float(x) for x in extra)
    from .runtime.pool import Terminated, sigterm_as_interrupt

    try:
        with sigterm_as_interrupt(), _one_line_warnings(args.command):
            return int(args.func(args) or 0)
    except (ValueError, ModelError) as exc:
        text = user_message(" ".join(str(exc).split()), sub, getattr(args, "_flag_aliases", None))
        print(f"{prog}: error: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM through sigterm_as_interrupt
        # a sweep says what it kept in the cache; anything else was stopped before keeping results
        what = str(exc) if str(exc) and str(exc) != "SIGTERM" else (
            "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted (SIGINT)")
        print(f"tcpabr {args.command}: {what}", file=sys.stderr)
        code = 143 if isinstance(exc, Terminated) or "SIGTERM" in what else 130
        if as_program:
            # the program leaves at once: the process pools' exit handlers can race the pool the interrupt
            # tore down and print a traceback after the one line ("Exception ignored ... Bad file descriptor")
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code
    except BrokenPipeError:  # output piped into e.g. `head`
        sys.stderr.close()
        return 0
    except OSError as exc:  # a full disk, a read-only folder: one line naming the file, exit 1
        print(f"{prog}: error: {os_error_line(exc)}", file=sys.stderr)
        return 1
    except MemoryError:  # a resource, not a defect: one line, exit 1
        print(f"{prog}: error: out of memory (a smaller problem: fewer states (--max-states, --bmax, --wmax), "
              "fewer workers, or a machine with more memory)", file=sys.stderr)
        return 1
    except Exception as exc:  # a defect of the toolkit: a fault report, one line naming it, exit 70
        return _fault(exc, argv, prog)


#: exit status of a command that failed on a defect of the toolkit (BSD's EX_SOFTWARE)
EXIT_FAULT = 70


def _fault(exc: Exception, argv: list[str], prog: str) -> int:
    """Keep ``exc`` in a fault report (:mod:`tcpabr_model.runtime.fault`) and say so in one line;
    with ``TCPABR_DEBUG=1``, raise it instead.  Where no report can be written, the traceback
    goes to stderr, so that nothing is lost."""
    from .runtime.fault import DEBUG_ENV, debug_requested, write_fault_report

    if debug_requested():
        raise exc
    what = " ".join(f"{type(exc).__name__}: {exc}".split())
    if len(what) > 200:
        what = what[:197] + "..."
    path = write_fault_report(exc, argv)
    if path is None:
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        print(f"{prog}: internal error ({what}): a defect of tcpabr-model, not of the input; no fault report "
              "could be written, the traceback is above", file=sys.stderr)
    else:
        print(f"{prog}: internal error ({what}): a defect of tcpabr-model, not of the input; the traceback, "
              f"the command and the versions are in {path} (please report it; {DEBUG_ENV}=1 shows the traceback "
              "here)", file=sys.stderr)
    return EXIT_FAULT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
