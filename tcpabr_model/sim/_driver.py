"""What the two replication drivers share (private): :func:`~tcpabr_model.sim.simulate`
and :func:`~tcpabr_model.sim.simulate_network` validate the same arguments and run their
replications the same way, so the numbers never depend on the number of workers."""

from __future__ import annotations

from contextlib import contextmanager

from .._pool import process_pool  # workers end with this process (issue 17)
from .._validate import check_int, check_real

__all__ = ["replication_args", "run_tasks", "replication_pool"]


def replication_args(replications, seed, level, workers) -> tuple:
    """Validated (replications, seed, level, workers) of a replication driver."""
    return (check_int("replications", replications, 1, 100_000), check_int("seed", seed, 0),
            check_real("level", level, 0.0, 1.0, low_open=True, high_open=True),
            check_int("workers", workers, 1, 256))


@contextmanager
def replication_pool(workers: int):
    """A process pool of ``workers`` processes, or None (in-process) for one worker; shut
    down on exit however the block ends."""
    pool = process_pool(workers) if workers > 1 else None
    try:
        yield pool
    finally:
        if pool is not None:
            pool.shutdown()


def run_tasks(fn, tasks, pool=None):
    """``fn`` over ``tasks`` in task order, in ``pool`` if given: replication r always uses
    seed child r and results come back (lazily) in replication order, whatever the worker
    count."""
    return pool.map(fn, tasks) if pool is not None else map(fn, tasks)
