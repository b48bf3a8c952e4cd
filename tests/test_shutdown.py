"""Clean shutdown: pool workers end with their parent; an interrupted sweep says what it kept.

Real processes and real signals: ``tcpabr sweep`` runs a slow point function with two
workers (each worker writes its pid to a folder when it starts a point), the test sends
SIGINT, SIGTERM or SIGKILL to the parent and checks that every worker is gone within a
few seconds and that the parent printed one line naming the cache.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SLOW = textwrap.dedent('''
    import os, time
    def point(params, seed):
        open(os.path.join(params["dir"], str(os.getpid())), "a").close()
        time.sleep(params["t"])
        return {"pid": os.getpid()}
''')


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except FileNotFoundError:
        return False


def _wait(cond, timeout: float, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


def _start(tmp_path, extra=()):
    (tmp_path / "slowmod.py").write_text(SLOW)
    pids = tmp_path / "pids"
    pids.mkdir()
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    # one quick point (finished and cached before the signal) and three that never finish
    argv = [sys.executable, "-m", "tcpabr_model", "sweep", "slowmod:point", "--grid", "t=0.01,300,301,302",
            "--fixed", f"dir={pids}", "--cache", str(cache), "--no-progress", *extra]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, pids, cache


def _workers_running(proc, pids, n=2, timeout=120):
    ok = _wait(lambda: len(list(pids.iterdir())) >= n or proc.poll() is not None, timeout)
    assert ok and proc.poll() is None, proc.communicate()[1] if proc.poll() is not None else "workers did not start"
    time.sleep(0.3)  # the quick point's result reaches the parent and its cache
    return [int(p.name) for p in pids.iterdir() if int(p.name) != proc.pid]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_sigint_sigterm_stop_workers_and_say_what_was_kept(tmp_path, sig):
    proc, pids, cache = _start(tmp_path, ["--workers", "2"])
    workers = _workers_running(proc, pids)
    assert workers and all(_alive(p) for p in workers)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == (130 if sig == signal.SIGINT else 143), err
    assert _wait(lambda: not any(_alive(p) for p in workers), 5.0), [p for p in workers if _alive(p)]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    how = "interrupted (SIGINT)" if sig == signal.SIGINT else "terminated (SIGTERM)"
    assert lines[0] == (f"tcpabr sweep: {how}: 1 of the 4 slowmod:point points to compute finished and are kept "
                        f"in the cache {cache} (0 were there already); the same sweep resumes from them"), err
    assert len(list(cache.glob("*.json"))) == 1


def test_sigkill_of_the_parent_ends_the_workers(tmp_path):
    proc, pids, _ = _start(tmp_path, ["--workers", "2"])
    workers = _workers_running(proc, pids)
    proc.kill()
    proc.communicate(timeout=30)
    assert _wait(lambda: not any(_alive(p) for p in workers), 5.0), [p for p in workers if _alive(p)]


def test_sigkill_ends_dask_local_cluster_workers(tmp_path):
    pytest.importorskip("distributed")
    proc, pids, _ = _start(tmp_path, ["--dask", "local:2"])
    workers = _workers_running(proc, pids, timeout=180)
    proc.kill()
    proc.communicate(timeout=30)
    assert _wait(lambda: not any(_alive(p) for p in workers), 10.0), [p for p in workers if _alive(p)]


def test_worker_exits_when_parent_is_gone():
    """The portable fallback alone (no PR_SET_PDEATHSIG): a grandchild watching a dead parent exits."""
    code = textwrap.dedent('''
        import os, sys, time
        import tcpabr_model.runtime.pool as pool
        pool._set_pdeathsig = lambda: False      # test the parent-watch thread only
        r, w = os.pipe()
        if os.fork() == 0:                        # middle process
            if os.fork() == 0:                    # the worker
                pool.watch_parent(os.getppid())
                os.write(w, f"{os.getpid()}\\n".encode())
                time.sleep(60)
                os._exit(0)
            time.sleep(0.5)
            os._exit(0)                           # the parent dies without cleanup
        print(os.read(r, 64).decode().strip(), flush=True)
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    pid = int(out.stdout.split()[0])
    assert _wait(lambda: not _alive(pid), 5.0)


def test_corrupt_cache_entry_is_reported_with_its_file(tmp_path, capsys):
    from tcpabr_model.cli import main
    from tcpabr_model.sweep import run_sweep
    from tcpabr_model.sweep._cache import CacheEntryDiscarded

    grid = {"delta": [0.2], "s": [0.03]}
    run_sweep("effcap_design", grid, cache_dir=tmp_path, workers=1)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{not json")
    with pytest.warns(CacheEntryDiscarded, match=f"discarded cache entry {entry} .not a valid json record"):
        df = run_sweep("effcap_design", grid, cache_dir=tmp_path, workers=1)
    assert not df.cached.any() and json.loads(entry.read_text())["result"]["m"] == 7  # recomputed, rewritten
    rec = json.loads(entry.read_text())
    rec["key"] = "0" * 64
    entry.write_text(json.dumps(rec))
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        assert main(["sweep", "effcap_design", "--grid", "delta=0.2", "--fixed", "s=0.03", "--cache", str(tmp_path),
                     "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert err == (f"tcpabr sweep: warning: discarded cache entry {entry} (its record does not match its key "
                   "or format); the point is recomputed\n")
