"""Compatibility name for :mod:`tcpabr_model.validation` (``python3 -m validation`` from the clone's root).

The checks live in the installed package; use ``tcpabr validate`` or
``python3 -m tcpabr_model.validation`` from any folder.
"""

import importlib
import sys

from tcpabr_model.validation import *  # noqa: F403
from tcpabr_model.validation import __all__  # noqa: F401

# ``from validation.checks import X`` keeps working: the submodules under their old names
for _name in ("checks", "_sims", "markov_checks", "validity_checks"):
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"tcpabr_model.validation.{_name}")
