"""The thread count of every OpenBLAS loaded in this process, pinned for a block of work
(:func:`blas_threads`), and the count the Markov engine's solve runs at
(:data:`SOLVE_BLAS_THREADS`; docs/model.md sec. 5a item 6)."""

from __future__ import annotations

import contextlib
import ctypes

__all__ = ["SOLVE_BLAS_THREADS", "blas_threads"]

#: BLAS threads of the matrix-free solve's LAPACK calls (the SCC blocks inverted by
#: ``prepare_forward``; docs/model.md sec. 5a item 6) [choice]: one, whatever the machine.  The
#: blocks of an INSTCAP chain over service patterns reach 10^2..10^3 states and OpenBLAS
#: factors such a block with a thread-count-dependent algorithm (its last bits changed with
#: OPENBLAS_NUM_THREADS), and its threads spin on a loaded machine (a 1500 x 1500 inverse:
#: 5.1 s with 2 threads on the shared 2-core VM, 0.5-1.3 s with one).  One thread makes the
#: results the same on every machine and the solve up to 12x faster there.
SOLVE_BLAS_THREADS = 1
_BLAS_GET = ("scipy_openblas_get_num_threads", "scipy_openblas_get_num_threads64_", "openblas_get_num_threads",
             "openblas_get_num_threads64_")
_BLAS_SET = ("scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_", "openblas_set_num_threads",
             "openblas_set_num_threads64_")
_BLAS_LIBS: list | None = None


def _openblas_libs() -> list:
    """(get, set) of the thread count of every OpenBLAS loaded in this process (numba's
    LAPACK calls go through scipy's ``cython_lapack``, which loads scipy's), found in
    ``/proc/self/maps``; empty where that is not readable (then nothing is pinned)."""
    global _BLAS_LIBS
    if _BLAS_LIBS is None:
        import scipy.linalg.cython_lapack  # noqa: F401  (loads scipy's OpenBLAS)

        _BLAS_LIBS = []
        try:
            with open("/proc/self/maps") as f:
                paths = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower() and "/" in ln})
        except OSError:
            paths = []
        for path in paths:
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            get = next((getattr(lib, n) for n in _BLAS_GET if hasattr(lib, n)), None)
            put = next((getattr(lib, n) for n in _BLAS_SET if hasattr(lib, n)), None)
            if get is not None and put is not None:
                get.restype = ctypes.c_int
                put.argtypes = [ctypes.c_int]
                _BLAS_LIBS.append((get, put))
    return _BLAS_LIBS


@contextlib.contextmanager
def blas_threads(n: int):
    """Run the block with every loaded OpenBLAS at ``n`` threads, then restore their counts."""
    libs = _openblas_libs()
    before = [get() for get, _ in libs]
    try:
        for _, put in libs:
            put(n)
        yield
    finally:
        for (_, put), k in zip(libs, before):
            put(k)
