"""Cross-validation report for the closed forms (``tcpabr validate [--quick|--full]``).

Every formula of :mod:`tcpabr_model.closed_forms` is compared with an independent
computation (a dedicated simulator in :mod:`tcpabr_model.validation._sims`, exact enumeration, or a
value printed in the seed papers).  The report lists formula, closed-form value,
independent value, relative error, tolerance, verdict and the basis of the tolerance.
"""

import importlib

__all__ = ["ALL_CHECKS", "Check", "run_all"]


def __getattr__(name):  # PEP 562: ``tcpabr validate --help`` does not import the checks
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(".checks", __name__), name)
    globals()[name] = value
    return value
