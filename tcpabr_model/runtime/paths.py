"""Output paths checked before any computing starts.

A command that would run for minutes and then fail to write its result is checked
first: the folder is created (or must already be a folder) and a probe file is written
and removed, so that a read-only place, an existing file in the way or a missing drive
is reported at once, as ``ValueError`` naming the parameter, the path given and the
reason (the operating system's, with what it means where its words mislead: creating a
file in ``/proc`` fails with "No such file or directory" although the folder exists).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

__all__ = ["check_output_dir", "check_output_file"]


def _existing_ancestor(p: Path) -> Path:
    p = p.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _why(exc: OSError, where: Path) -> str:
    """The reason of a failed create in (or below) the folder ``where``."""
    why = exc.strerror or type(exc).__name__
    if exc.errno == errno.ENOENT:
        top = _existing_ancestor(where)
        if top.is_dir():   # the folder is there: its file system takes no new entries (/proc, /sys)
            why += f": {str(top)!r} exists, but its file system does not allow creating files or folders in it"
    return why


def _make_dir(p: Path, name: str, shown: Path) -> None:
    """Create the folder ``p`` (``shown`` is the path named in the message)."""
    if p.exists() and not p.is_dir():
        raise ValueError(f"{name}={str(shown)!r} is invalid: it is an existing file, not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{name}={str(shown)!r} is invalid: cannot create the folder ({_why(exc, p)})") from None


def _probe(p: Path) -> OSError | None:
    """Write and remove a probe file in the folder ``p``; the error if that fails."""
    try:
        with tempfile.TemporaryFile(dir=p, prefix=".tcpabr-probe-"):
            pass
    except OSError as exc:
        return exc
    return None


def check_output_dir(path, name: str) -> Path:
    """The folder ``path``, created if missing, after checking that files can be written in it."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"{name}={path!r} is invalid: must be a folder path")
    p = Path(path)
    _make_dir(p, name, p)
    exc = _probe(p)
    if exc is not None:
        raise ValueError(f"{name}={str(p)!r} is invalid: cannot write in the folder ({_why(exc, p)})")
    return p


def check_output_file(path, name: str, suffixes: tuple[str, ...] = ()) -> Path:
    """The file path ``path`` (its folder created), after checking that it can be written.

    ``suffixes`` (lower case, with the dot) are the allowed endings; an existing file is
    overwritten later, so it must be writable; an existing folder of that name is refused.
    A folder that cannot be created is named as such; a folder that takes no file names
    the path given.
    """
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"{name}={path!r} is invalid: must be a file path")
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise ValueError(f"{name}={str(p)!r} is invalid: must end in {' or '.join(suffixes)}")
    if p.is_dir():
        raise ValueError(f"{name}={str(p)!r} is invalid: it is a folder, not a file")
    folder = p.parent if str(p.parent) else Path(".")
    _make_dir(folder, name, folder)
    exc = _probe(folder)
    if exc is not None:
        raise ValueError(f"{name}={str(p)!r} is invalid: cannot create a file in its folder {str(folder)!r} "
                         f"({_why(exc, folder)})")
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"{name}={str(p)!r} is invalid: the existing file is not writable")
    return p
