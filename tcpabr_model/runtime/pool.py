"""Worker processes that end when their parent ends (the one pool helper of the package).

A worker of :func:`process_pool` (and of a Dask local cluster set up with
:func:`watch_dask_workers`) exits when the process that started it ends, however it
ends: SIGINT, SIGTERM, SIGKILL or a crash.  Two mechanisms, so that none is left
running, re-parented to PID 1:

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (through :mod:`ctypes`) asks the kernel
  to kill the worker the moment its parent dies;
* everywhere, a daemon thread in the worker checks once per :data:`WATCH_SECONDS`
  whether its parent is still the process that started it, and exits if not.

Workers ignore SIGINT: Ctrl-C reaches the whole foreground process group, and only the
parent decides what to do (it stops the pool with :func:`stop_pool` and reports what
was kept).  :func:`sigterm_as_interrupt` turns SIGTERM in the parent into the same
:class:`KeyboardInterrupt`, so that a terminated run also stops its workers and says
what it kept.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

__all__ = ["process_pool", "stop_pool", "watch_parent", "watch_dask_workers", "sigterm_as_interrupt",
           "Terminated", "WATCH_SECONDS"]

#: Period of the portable parent check in each worker, seconds.
WATCH_SECONDS = 1.0

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class Terminated(KeyboardInterrupt):
    """SIGTERM received (raised by the handler of :func:`sigterm_as_interrupt`)."""


def _set_pdeathsig() -> bool:
    """Ask the Linux kernel to SIGKILL this process when its parent dies; False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # pragma: no cover - no libc / no prctl
        return False


def _parent_watch(parent_pid: int, period: float) -> None:
    import time

    while True:
        if os.getppid() != parent_pid:
            os._exit(1)  # the parent is gone: leave at once, without cleanup handlers
        time.sleep(period)


def watch_parent(parent_pid: int | None = None, *, ignore_sigint: bool = True) -> None:
    """Make the calling (worker) process end when ``parent_pid`` (default: its parent) ends.

    Used as the initializer of :func:`process_pool`'s workers; call it first thing in any
    other worker process.  Exits at once if the parent is already gone.
    """
    parent_pid = os.getppid() if parent_pid is None else int(parent_pid)
    if ignore_sigint and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _set_pdeathsig()
    if os.getppid() != parent_pid:  # died before prctl took effect
        os._exit(1)
    threading.Thread(target=_parent_watch, args=(parent_pid, WATCH_SECONDS), name="tcpabr-parent-watch",
                     daemon=True).start()


def process_pool(workers: int):
    """A :class:`concurrent.futures.ProcessPoolExecutor` whose workers end with this process.

    CHOICE: the ``fork`` start method where available (workers inherit the imported,
    numba-compiled package; no re-import per worker), else ``spawn``.
    """
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=watch_parent,
                               initargs=(os.getpid(),))


def stop_pool(pool) -> None:
    """Stop ``pool`` now: cancel the queued tasks and kill the workers (running tasks are lost)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # no public accessor
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        with contextlib.suppress(Exception):
            p.kill()
    for p in procs:
        with contextlib.suppress(Exception):
            p.join(timeout=5)
    # join the executor's management thread now that its workers are gone: left running, it
    # can close its wake-up pipe while the interpreter's exit hook writes to it (CPython 3.11,
    # "Exception ignored ... OSError: Bad file descriptor" on stderr after Ctrl-C, seen once in
    # tests/test_shutdown.py)
    thread = getattr(pool, "_executor_manager_thread", None)   # no public accessor
    if thread is not None:
        with contextlib.suppress(Exception):
            thread.join(timeout=5)


def _watch_if_child(parent_pid: int) -> None:
    """In a Dask worker: watch ``parent_pid`` if it started this worker process (a local cluster)."""
    if os.getppid() == parent_pid:
        watch_parent(parent_pid, ignore_sigint=False)


def watch_dask_workers(client) -> None:
    """Make the workers of a *local* Dask cluster end when this process ends (also restarted ones).

    Workers of a remote cluster (whose parent is not this process) are left alone.
    """
    from distributed.diagnostics.plugin import WorkerPlugin

    parent = os.getpid()

    class ParentWatch(WorkerPlugin):  # pickled by value (cloudpickle) for the workers
        name = "tcpabr-parent-watch"

        def setup(self, worker):
            _watch_if_child(parent)

    register = getattr(client, "register_plugin", None) or client.register_worker_plugin
    register(ParentWatch(), name=ParentWatch.name)


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum, frame):
        raise Terminated("SIGTERM")

    old = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
