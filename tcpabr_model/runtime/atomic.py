"""Result files written whole or not at all.

Every report, table, figure, trace and cache entry is written to a temporary file in
the folder of its final path (``.<name>.<random>.tmp<suffix>``), flushed to disk
(``fsync``) and renamed over the final path with :func:`os.replace` (atomic on POSIX).
A failure while writing (a full disk, a read-only or vanished folder, a signal) removes
the temporary file and leaves the previous file, or none: a reader never sees a file
cut off.  An :class:`OSError` while writing is raised again as :class:`OutputError`
naming the final path, which the ``tcpabr`` command prints in one line (exit 1).

* :func:`atomic_open` -- a context manager giving a text or binary file object;
* :func:`atomic_path` -- a context manager giving a temporary *path*, for writers that
  want one (``DataFrame.to_parquet``, ``numpy.savez``);
* :func:`write_text`, :func:`write_bytes`, :func:`save_figure`, :func:`write_table`,
  :func:`save_npz` -- the common cases.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

__all__ = ["OutputError", "atomic_open", "atomic_path", "write_text", "write_bytes", "save_figure",
           "write_table", "save_npz"]


class OutputError(OSError):
    """A result file could not be written; the message names its final path and the reason.

    The previous file at that path (if any) is unchanged and no temporary file is left.
    """

    def __init__(self, path, reason: str, err: int | None = None):
        self.path = os.fspath(path)
        super().__init__(err if err is not None else errno.EIO, f"cannot write {self.path}: {reason}")

    def __str__(self) -> str:
        return self.args[1]


def _file_mode(final: str) -> int:
    """The mode the file gets: the existing file's, else what ``open`` would give (0o666 & ~umask)."""
    try:
        return os.stat(final).st_mode & 0o7777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def _fsync_dir(folder: str) -> None:
    """Flush the rename itself (best effort: not every system lets a folder be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path next to ``path`` (same suffix); on a clean exit it is synced and
    renamed over ``path``; on any exception it is removed (an ``OSError`` becomes
    :class:`OutputError` naming ``path``)."""
    final = os.path.realpath(os.fspath(path)) if os.path.islink(path) else os.fspath(path)
    folder = os.path.dirname(final) or "."
    name = os.path.basename(final)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp" + Path(name).suffix, dir=folder)
        os.close(fd)
    except OSError as exc:
        raise OutputError(final, _reason(exc), exc.errno) from exc
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, _file_mode(final))
        os.replace(tmp, final)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(final, _reason(exc), exc.errno) from exc
        raise
    _fsync_dir(folder)


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", encoding: str | None = "utf-8", newline: str | None = None):
    """``open(path, mode)`` written atomically (mode ``"w"`` or ``"wb"``): a file object on a
    temporary file, renamed over ``path`` when the block ends without an exception."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode={mode!r} is invalid: must be 'w' or 'wb'")
    with atomic_path(path) as tmp:
        kw = {} if mode == "wb" else {"encoding": encoding, "newline": newline}
        with open(tmp, mode, **kw) as fh:
            yield fh


def write_text(path, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path, "w", encoding=encoding) as fh:
        fh.write(text)


def write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def save_figure(fig, path, **kwargs) -> None:
    """``fig.savefig(path, **kwargs)`` atomically (the format taken from ``path``'s suffix)."""
    kwargs.setdefault("format", Path(os.fspath(path)).suffix.lstrip(".").lower() or None)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, **kwargs)


def write_table(df, path, **kwargs) -> None:
    """A pandas DataFrame as CSV, or Parquet when ``path`` ends in ``.parquet``, atomically
    (``index=False`` unless given)."""
    kwargs.setdefault("index", False)
    with atomic_path(path) as tmp:
        if os.fspath(path).lower().endswith(".parquet"):
            df.to_parquet(tmp, **kwargs)
        else:
            df.to_csv(tmp, **kwargs)


def save_npz(path, compressed: bool = True, **arrays) -> None:
    """``numpy.savez_compressed(path, **arrays)`` (or ``savez``) atomically, at exactly ``path``."""
    import numpy as np

    with atomic_open(path, "wb") as fh:
        (np.savez_compressed if compressed else np.savez)(fh, **arrays)
