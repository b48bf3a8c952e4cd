"""Cross-validation report for the closed forms (``python -m validation --quick|--full``).

Every formula of :mod:`tcpabr_model.closed_forms` is compared with an independent
computation (a dedicated simulator in :mod:`validation._sims`, exact enumeration, or a
value printed in the seed papers).  The report lists formula, closed-form value,
independent value, relative error, tolerance, verdict and the basis of the tolerance.
"""

from .checks import ALL_CHECKS, Check, run_all

__all__ = ["ALL_CHECKS", "Check", "run_all"]
