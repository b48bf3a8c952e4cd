"""On-disk cache of finished sweep points (one file per point, written atomically).

The key of a point is the sha256 of the canonical JSON of (parameters, method name,
method options, base seed, package version).  A file ``<key>.json`` holds the result
dict (``<key>.pkl``, a pickle, when the result is not JSON-serialisable), the compute
time and the key's inputs.  Files are written to a temporary file in the same folder
and renamed with :func:`os.replace`, so a killed sweep leaves either the whole file or
none; a file that cannot be read or does not match its key is reported
(:class:`CacheEntryDiscarded` warning with its path), recomputed and overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle

from ..runtime.atomic import write_bytes
from ._grid import canonical_params

__all__ = ["cache_key", "load", "store", "resolve_cache_dir", "remove_orphans", "ENV_VAR",
           "CacheEntryDiscarded"]

#: Environment variable giving the default cache folder of :func:`run_sweep`.
ENV_VAR = "TCPABR_CACHE_DIR"

_FORMAT = 1  # bump when the file layout changes


def resolve_cache_dir(cache_dir) -> str | None:
    """``cache_dir``, else ``$TCPABR_CACHE_DIR``, else None (no cache); folder created and writable.
    ``cache_dir=False``: no cache, whatever ``$TCPABR_CACHE_DIR`` says (``tcpabr sweep --cache none``)."""
    if cache_dir is False:
        return None
    if cache_dir is None:
        cache_dir = os.environ.get(ENV_VAR) or None
    if cache_dir is None:
        return None
    from ..runtime.paths import check_output_dir

    return str(check_output_dir(cache_dir, "cache_dir"))


#: Age (seconds) past which a temporary file in the cache folder is taken as left by a killed run.
ORPHAN_AGE_S = 600.0


def remove_orphans(cache_dir: str, older_than: float = ORPHAN_AGE_S) -> int:
    """Delete temporary files (``.<key>.json.<random>.tmp.json``) a killed sweep left between
    writing and renaming an entry; returns how many were removed.

    CHOICE: only those older than ``older_than`` seconds, so the file another sweep sharing
    the folder is writing at this moment is never touched (an entry is written in
    milliseconds).  They are never read as entries either way (:func:`load` opens
    ``<key>.json`` only).
    """
    import time

    now = time.time()
    removed = 0
    try:
        names = os.listdir(cache_dir)
    except OSError:
        return 0
    for name in names:
        if not (name.startswith(".") and (".tmp." in name or name.endswith(".tmp"))):
            continue
        path = os.path.join(cache_dir, name)
        try:
            if now - os.stat(path).st_mtime > older_than:
                os.unlink(path)
                removed += 1
        except OSError:
            continue
    return removed


def cache_key(params_canonical: str, method_name: str, options_canonical: str, seed: int,
              version: str) -> str:
    """sha256 hex digest identifying one point's result."""
    text = json.dumps({"format": _FORMAT, "params": params_canonical, "method": method_name,
                       "options": options_canonical, "seed": int(seed), "version": version},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CacheEntryDiscarded(UserWarning):
    """A cache file that cannot be read or does not match its key was ignored (the point is recomputed)."""


def load(cache_dir: str, key: str):
    """``(result, seconds)`` stored under ``key``, or None when absent, partial or corrupt.

    A file that exists but is unreadable, not valid JSON/pickle or not the record of
    ``key`` is reported with a :class:`CacheEntryDiscarded` warning naming the file (it
    is overwritten when the point is stored again).
    """
    for ext in (".json", ".pkl"):
        path = os.path.join(cache_dir, key + ext)
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            continue
        except OSError as exc:
            _discard(path, f"cannot read it: {exc.strerror or exc}")
            continue
        try:
            rec = json.loads(raw.decode("utf-8")) if ext == ".json" else pickle.loads(raw)
        except Exception as exc:  # noqa: BLE001 - any undecodable file is a cache miss
            _discard(path, f"not a valid {ext[1:]} record: {type(exc).__name__}")
            continue
        if (isinstance(rec, dict) and rec.get("key") == key and rec.get("format") == _FORMAT
                and isinstance(rec.get("result"), dict)):
            seconds = rec.get("seconds")
            return rec["result"], float(seconds) if isinstance(seconds, (int, float)) else float("nan")
        _discard(path, "its record does not match its key or format")
    return None


def _discard(path: str, reason: str) -> None:
    import warnings

    warnings.warn(f"discarded cache entry {path} ({reason}); the point is recomputed", CacheEntryDiscarded,
                  stacklevel=3)


def store(cache_dir: str, key: str, result: dict, seconds: float, meta: dict) -> str:
    """Write one finished point atomically; returns the file path."""
    rec = {"format": _FORMAT, "key": key, "result": result, "seconds": float(seconds), **meta}
    try:
        payload = json.dumps(rec).encode("utf-8")  # result keys keep their order (columns)
        ext = ".json"
        # JSON must give back the same values (canonically: tuples may come back as lists)
        if canonical_params(json.loads(payload.decode("utf-8"))["result"]) != canonical_params(result):
            raise TypeError("result does not round-trip through JSON")
    except (TypeError, ValueError):
        payload = pickle.dumps(rec, protocol=pickle.HIGHEST_PROTOCOL)
        ext = ".pkl"
    final = os.path.join(cache_dir, key + ext)
    write_bytes(final, payload)
    return final
