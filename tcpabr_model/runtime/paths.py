"""Output paths checked before any computing starts.

A command that would run for minutes and then fail to write its result is checked
first: the folder is created (or must already be a folder) and a probe file is written
and removed, so that a read-only place, an existing file in the way or a missing drive
is reported at once, as ``ValueError`` naming the parameter and the reason.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["check_output_dir", "check_output_file"]


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_output_dir(path, name: str) -> Path:
    """The folder ``path``, created if missing, after checking that files can be written in it."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"{name}={path!r} is invalid: must be a folder path")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ValueError(f"{name}={str(p)!r} is invalid: it is an existing file, not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{name}={str(p)!r} is invalid: cannot create the folder ({_why(exc)})") from None
    try:
        with tempfile.TemporaryFile(dir=p, prefix=".tcpabr-probe-"):
            pass
    except OSError as exc:
        raise ValueError(f"{name}={str(p)!r} is invalid: cannot write in the folder ({_why(exc)})") from None
    return p


def check_output_file(path, name: str, suffixes: tuple[str, ...] = ()) -> Path:
    """The file path ``path`` (its folder created), after checking that it can be written.

    ``suffixes`` (lower case, with the dot) are the allowed endings; an existing file is
    overwritten later, so it must be writable; an existing folder of that name is refused.
    """
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"{name}={path!r} is invalid: must be a file path")
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise ValueError(f"{name}={str(p)!r} is invalid: must end in {' or '.join(suffixes)}")
    if p.is_dir():
        raise ValueError(f"{name}={str(p)!r} is invalid: it is a folder, not a file")
    check_output_dir(p.parent if str(p.parent) else Path("."), name)
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"{name}={str(p)!r} is invalid: the existing file is not writable")
    return p
