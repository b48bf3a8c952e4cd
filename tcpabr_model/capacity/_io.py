"""Save and load a :class:`CapacityModel` as JSON or TOML (format version 1).

Both files hold the same table::

    format = "tcpabr-capacity-model"
    version = 1
    time = "discrete"            # or "continuous"
    levels = [c_1, ..., c_K]     # packets per time unit
    transition = [[...], ...]    # K x K per epoch  (or generator = [[...]] per time unit)
    epoch = 0.1                  # time units per epoch (discrete only)
    time_unit = 1.0              # seconds per time unit (optional)
    packet_bytes = 1500          # optional

Floats are written with ``repr`` (shortest round-trip form), so a save/load round trip is
exact.  TOML is read with the standard library's ``tomllib`` and written here (the
subset above: strings, integers, floats, arrays of floats and of arrays), to keep the base
install free of a TOML writer.
"""

from __future__ import annotations

import json
import math
import os
import tomllib

from ..errors import ErgodicityError
from ._model import CapacityModel

__all__ = ["save_model", "load_model", "FORMAT", "VERSION"]

FORMAT = "tcpabr-capacity-model"
VERSION = 1
_KEYS = {"format", "version", "time", "levels", "transition", "generator", "epoch", "time_unit", "packet_bytes"}


def _kind(path) -> str:
    p = os.fspath(path).lower()
    if p.endswith(".json"):
        return "json"
    if p.endswith(".toml"):
        return "toml"
    raise ValueError(f"path={os.fspath(path)!r} is invalid: must end in .json or .toml")


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"value={v!r} is invalid: TOML model files hold finite numbers only")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string for this character set
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _payload(model: CapacityModel) -> dict:
    return {"format": FORMAT, "version": VERSION, **model.to_dict()}


def save_model(model: CapacityModel, path) -> None:
    """Write ``model`` to ``path`` (``.json`` or ``.toml``)."""
    if not isinstance(model, CapacityModel):
        raise ValueError(f"model={model!r} is invalid: must be a CapacityModel")
    kind = _kind(path)
    d = _payload(model)
    if kind == "json":
        text = json.dumps(d, indent=2) + "\n"
    else:
        lines = ["# tcpabr capacity model (levels in packets per time unit)"]
        for k, v in d.items():
            if isinstance(v, list) and v and isinstance(v[0], list):
                rows = ",\n".join("  " + _toml_value(r) for r in v)
                lines.append(f"{k} = [\n{rows},\n]")
            else:
                lines.append(f"{k} = {_toml_value(v)}")
        text = "\n".join(lines) + "\n"
    from ..runtime.atomic import write_text

    write_text(path, text)


def read_bytes(path, what: str) -> bytes:
    """The bytes of ``path``; ``ValueError("<path>: cannot read <what> (<reason>)")`` otherwise."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ValueError(f"{os.fspath(path)}: cannot read {what} ({exc.strerror})") from None


def load_model(path) -> CapacityModel:
    """Read a model written by :func:`save_model` (checks format, version and keys)."""
    kind = _kind(path)
    name = os.fspath(path)
    raw = read_bytes(path, "the model file")
    try:
        d = json.loads(raw) if kind == "json" else tomllib.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{name}: is invalid: not a {kind.upper()} file ({exc})") from None
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ValueError(f"{name}: format={d.get('format') if isinstance(d, dict) else None!r} is invalid: "
                         f"must be {FORMAT!r}")
    if d.get("version") != VERSION:
        raise ValueError(f"{name}: version={d.get('version')!r} is invalid: this release reads version {VERSION}")
    unknown = set(d) - _KEYS
    if unknown:
        raise ValueError(f"{name}: keys {sorted(unknown)} are invalid: allowed keys are {sorted(_KEYS)}")
    time = d.get("time")
    if time not in ("discrete", "continuous"):
        raise ValueError(f"{name}: time={time!r} is invalid: must be 'discrete' or 'continuous'")
    if (time == "discrete") != ("transition" in d):
        raise ValueError(f"{name}: time={time!r} is invalid: a discrete model has 'transition', a continuous "
                         "one 'generator'")
    if "levels" not in d:
        raise ValueError(f"{name}: levels is missing")
    try:
        return CapacityModel(d["levels"], transition=d.get("transition"), generator=d.get("generator"),
                             epoch=d.get("epoch"), time_unit=d.get("time_unit"), packet_bytes=d.get("packet_bytes"))
    except ErgodicityError as exc:   # a reducible chain in the file: the same error, naming the file (an audit)
        raise ErgodicityError(f"{name}: {exc}") from None
    except (ValueError, TypeError) as exc:     # a field of the file: say which file
        msg = str(exc)
        if isinstance(exc, TypeError) or " is invalid" not in msg:
            msg = f"levels, transition or generator is invalid: must hold numbers ({msg})"
        raise ValueError(f"{name}: {msg}") from None
