"""Load a script of the tree (``analytics/*.py``, ``notebooks/execute.py``) as a module, for tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_script(relpath: str, name: str):
    """The module of ``ROOT / relpath``, executed once under ``name``."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relpath)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
