"""Numba reference-count helper for the kernels (private).

Numba increments the reference count of every array argument of a function (and of the
copies it makes when it inlines a call with ``inline="always"``) on entry and releases each
one right after its *last use*.  When those last uses are spread over many branches, LLVM's
reference-count pruning pass cannot pair the increments with the releases, and each call
then pays two atomic operations per array argument; for ``_arrive`` in the network kernel
(about 25 arrays, once per cell) that was more than half of the kernel's time.

:func:`keep_alive` called once at the single exit of such a function keeps every array
alive up to that point, so all releases sit in one block that post-dominates the
increments and the pruning pass removes them all.  It compiles to nothing.
"""

from __future__ import annotations

from numba import njit

__all__ = ["keep_alive"]


@njit(cache=True)
def keep_alive(*arrays):
    """No-op; the arguments stay referenced up to the call (see the module docstring)."""
    return None
