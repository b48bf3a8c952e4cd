"""tcpabr-model: analytical models and a cell-level simulator of TCP over ATM/ABR rate control."""

from importlib.metadata import PackageNotFoundError as _NotFound
from importlib.metadata import version as _version

try:
    __version__ = _version("tcpabr-model")
except _NotFound:  # pragma: no cover - running from a source tree that is not installed
    __version__ = "0+unknown"

from pathlib import Path as _Path

from tcpabr_model import _numba_cache

# Before any kernel module is imported: one stamp of all package sources for every cached
# kernel, so that editing a callee's module can never leave a stale compiled caller.
_numba_cache.install(_Path(__file__).resolve().parent)
