"""tcpabr-model: analytical models and a cell-level simulator of TCP over ATM/ABR rate control."""

from importlib.metadata import PackageNotFoundError as _NotFound
from importlib.metadata import version as _version

try:
    __version__ = _version("tcpabr-model")
except _NotFound:  # pragma: no cover - running from a source tree that is not installed
    __version__ = "0+unknown"
