"""A file on a fault: what the ``tcpabr`` command keeps when it fails on its own bug.

Bad input (:class:`ValueError`), an untrustworthy computation
(:class:`~tcpabr_model.errors.ModelError`) and an unwritable result file (:class:`OSError`)
are the user's to act on and get one line each (``tcpabr_model.cli``). Anything else is a
defect of the toolkit: the command then writes a **fault report** (:func:`write_fault_report`)
and prints one line that names it, instead of a traceback the user would have to copy from
the terminal. The report holds what a maintainer needs to reproduce the failure:

* the command line as run, the working directory and the time (UTC);
* the versions of tcpabr-model, Python, numpy, scipy, numba, pandas and matplotlib, and
  the platform;
* the ``TCPABR_*``, ``NUMBA_*`` and ``OMP/OPENBLAS_NUM_THREADS`` environment variables;
* the full traceback, chained exceptions included.

It is written to ``$TCPABR_FAULT_DIR`` if set, else the current directory, else the
system's temporary folder (the first that can be written), as
``tcpabr-fault-<UTC time>-<pid>.txt`` (written whole or not at all, :mod:`.atomic`).
``TCPABR_DEBUG=1`` lets the exception through instead (a developer's traceback).
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import sys
import tempfile
import traceback
from pathlib import Path

__all__ = ["FAULT_DIR_ENV", "DEBUG_ENV", "fault_report_text", "write_fault_report", "debug_requested"]

#: the folder for fault reports (else the current directory, else the temporary folder)
FAULT_DIR_ENV = "TCPABR_FAULT_DIR"
#: set to 1 to see the traceback instead of a fault report
DEBUG_ENV = "TCPABR_DEBUG"

_PACKAGES = ("numpy", "scipy", "numba", "pandas", "matplotlib")
_ENV_PREFIXES = ("TCPABR_", "NUMBA_")
_ENV_NAMES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def debug_requested() -> bool:
    """True where ``TCPABR_DEBUG`` asks for the traceback itself (any value but '', '0')."""
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _versions() -> list[str]:
    from importlib import metadata

    out = []
    for name in ("tcpabr-model", *_PACKAGES):
        try:
            out.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name} (not installed)")
    return out


def fault_report_text(exc: BaseException, argv: list[str], when: _dt.datetime | None = None) -> str:
    """The report of ``exc`` raised by ``tcpabr ARGV`` (see the module docstring)."""
    when = when or _dt.datetime.now(_dt.timezone.utc)
    env = sorted((k, v) for k, v in os.environ.items()
                 if k.startswith(_ENV_PREFIXES) or k in _ENV_NAMES)
    lines = [
        "tcpabr fault report: the command failed on a defect of tcpabr-model (not on its input).",
        "Please send this file with the report of the problem.",
        "",
        f"time (UTC):  {when.strftime('%Y-%m-%d %H:%M:%S')}",
        f"command:     tcpabr {' '.join(argv)}",
        f"directory:   {os.getcwd()}",
        f"python:      {sys.version.split()[0]} ({sys.executable})",
        f"platform:    {platform.platform()}; {os.cpu_count()} CPUs",
        "versions:    " + "; ".join(_versions()),
        "environment: " + ("; ".join(f"{k}={v}" for k, v in env) if env else "(no TCPABR_*, NUMBA_* or thread variables)"),
        "",
        f"error: {type(exc).__name__}: {exc}",
        "",
        "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip(),
        "",
    ]
    return "\n".join(lines)


def _candidates() -> list[Path]:
    env = os.environ.get(FAULT_DIR_ENV)
    dirs = [Path(env)] if env else []
    return dirs + [Path.cwd(), Path(tempfile.gettempdir())]


def write_fault_report(exc: BaseException, argv: list[str]) -> Path | None:
    """Write the report of ``exc`` to the first writable folder of ``$TCPABR_FAULT_DIR``, the
    current directory and the temporary folder; its path, or None where none could be written."""
    from .atomic import write_text

    when = _dt.datetime.now(_dt.timezone.utc)
    text = fault_report_text(exc, argv, when)
    name = f"tcpabr-fault-{when.strftime('%Y%m%dT%H%M%SZ')}-{os.getpid()}.txt"
    for folder in _candidates():
        try:
            if not folder.is_dir():
                continue
            path = folder / name
            write_text(path, text)
            return path
        except OSError:
            continue
    return None
