"""Sweep API: grids, per-point seeds, the disk cache (corrupt files, a killed sweep), errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpabr_model.sweep import METHODS, Grid, SweepError, canonical_params, point_seed, register_method, run_sweep

# small, fast simulation points (about 10 ms each once compiled)
SIM_FIXED = {"delta": 40, "bmax": 10, "duration_units": 1500, "warmup_units": 100, "replications": 2}


def _frame_equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.drop(columns=["seconds", "cached"]).reset_index(drop=True),
                                  b.drop(columns=["seconds", "cached"]).reset_index(drop=True))


# ---- Grid ---------------------------------------------------------------------------
def test_grid_product_order_and_fixed():
    g = Grid({"psi": [1, 10, 100], "bmax": [10, 12]}, fixed={"delta": 40})
    assert len(g) == 6
    assert list(g)[:3] == [{"psi": 1, "bmax": 10, "delta": 40}, {"psi": 1, "bmax": 12, "delta": 40},
                           {"psi": 10, "bmax": 10, "delta": 40}]
    # iteration hands out copies
    p = g[0]
    p["psi"] = 99
    assert g[0]["psi"] == 1


def test_grid_union_and_from_points():
    a = Grid({"psi": [1, 2]}, fixed={"bmax": 10})
    b = Grid.from_points([{"psi": 2.0, "bmax": 10}, {"psi": 3, "bmax": 10}])
    u = a + b
    assert [p["psi"] for p in u] == [1, 2, 3]  # 2 and 2.0 are the same point
    assert Grid.from_points([{"x": 1}, {"x": 1}]).points == [{"x": 1}, {"x": 1}]


def test_grid_numpy_values_become_plain():
    g = Grid({"psi": np.geomspace(1, 100, 3)}, fixed={"bmax": np.int64(10)})
    assert all(type(p["psi"]) is float and type(p["bmax"]) is int for p in g)


@pytest.mark.parametrize("axes, fixed, msg", [
    ({"psi": 5}, None, "axes['psi']=5 is invalid"),
    ({"psi": "abc"}, None, "axes['psi']='abc' is invalid"),
    ({"psi": []}, None, "axes['psi']=[] is invalid"),
    ({"psi": [1]}, {"psi": 2}, "fixed key 'psi' is invalid"),
    ({"seed": [1, 2]}, None, "key 'seed' is invalid"),
    ({"psi": [object()]}, None, "psi=<object"),
])
def test_grid_bad_input(axes, fixed, msg):
    with pytest.raises(ValueError, match=msg.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        Grid(axes, fixed)


def test_grid_from_toml_and_yaml(tmp_path):
    toml = tmp_path / "g.toml"
    toml.write_text('[fixed]\ndelta = 40\nfeedback = "instcap"\n[grid]\npsi = [1, 10]\nbmax = [10, 12]\n')
    yml = tmp_path / "g.yaml"
    yml.write_text("fixed:\n  delta: 40\n  feedback: instcap\ngrid:\n  psi: [1, 10]\n  bmax: [10, 12]\n")
    assert Grid.from_file(toml) == Grid.from_file(yml) == \
        Grid({"psi": [1, 10], "bmax": [10, 12]}, fixed={"delta": 40, "feedback": "instcap"})
    pts = tmp_path / "p.toml"
    pts.write_text('[fixed]\ndelta = 40\n[grid]\npsi = [1, 2]\n[[points]]\nbmax = 10\n[[points]]\nbmax = 12\n')
    assert [(p["bmax"], p["psi"]) for p in Grid.from_file(pts)] == [(10, 1), (10, 2), (12, 1), (12, 2)]


@pytest.mark.parametrize("name, text, msg", [
    ("g.txt", "", "must end in .toml"),
    ("g.toml", "[grid\n", "grid file="),
    ("g.toml", "[other]\nx = 1\n", "key 'other' is invalid"),
    ("g.toml", "title = 'x'\n", "key 'title' is invalid"),
    ("g.toml", "[grid]\npsi = 3\n", "axes['psi']=3 is invalid"),
])
def test_grid_file_bad(tmp_path, name, text, msg):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=msg.replace("[", r"\[").replace("]", r"\]")):
        Grid.from_file(path)


# ---- canonical form and per-point seeds ---------------------------------------------
def test_canonical_params_normalises():
    assert canonical_params({"b": 10, "a": 2.5}) == canonical_params({"a": 2.5, "b": 10.0})
    assert canonical_params({"x": (1, 2)}) == canonical_params({"x": np.array([1.0, 2.0])})
    assert canonical_params({"x": np.float64(0.1)}) == canonical_params({"x": 0.1})
    assert canonical_params({"x": 0.1}) != canonical_params({"x": 0.1 + 1e-17 * 2**4})
    assert canonical_params({"x": True}) != canonical_params({"x": 1})


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.sampled_from(["psi", "bmax", "delta", "feedback", "k"]),
                       st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, width=64),
                                 st.text(max_size=5), st.booleans()),
                       min_size=1),
       st.integers(0, 2**32), st.randoms())
def test_point_seed_ignores_key_order_and_int_float(params, seed, rnd):
    items = list(params.items())
    rnd.shuffle(items)
    shuffled = dict(items)
    as_float = {k: (float(v) if isinstance(v, int) and not isinstance(v, bool) else v)
                for k, v in params.items()}
    s = point_seed(seed, "simulation", params)
    assert 0 <= s < 2**63
    assert s == point_seed(seed, "simulation", shuffled) == point_seed(seed, "simulation", as_float)


def test_point_seed_depends_on_seed_method_params():
    p = {"psi": 10, "bmax": 10}
    seeds = {point_seed(0, "simulation", p), point_seed(1, "simulation", p),
             point_seed(0, "analysis", p), point_seed(0, "simulation", {"psi": 10, "bmax": 12})}
    assert len(seeds) == 4
    with pytest.raises(ValueError, match="seed=-1 is invalid"):
        point_seed(-1, "simulation", p)


def test_simulation_sweep_independent_of_order_and_workers():
    g = Grid({"psi": [1, 10], "feedback": ["instcap", "effcap", "none"]}, fixed=SIM_FIXED)
    a = run_sweep("simulation", g, seed=3, workers=1, progress=False)
    perm = [4, 1, 5, 0, 3, 2]
    b = run_sweep("simulation", Grid.from_points([g[i] for i in perm]), seed=3, workers=2, progress=False)
    b = b.set_index(b.index.map(lambda j: perm[j])).sort_index()
    _frame_equal(a, b)
    assert (a.status == "ok").all() and a.seed.nunique() == len(g)
    assert a.efficiency.between(0, 1).all()
    # the seed column is the point's seed and drives the simulator: re-running one point
    from tcpabr_model.sim import simulate
    from tcpabr_model.sweep import build_sim_scenario

    row = a.iloc[2]
    params = g[2]
    assert row.seed == point_seed(3, "simulation", params)
    sc = build_sim_scenario({k: v for k, v in params.items() if k != "replications"})
    assert simulate(sc, replications=2, seed=int(row.seed)).efficiency.mean == row.efficiency
    # a different base seed gives different numbers
    c = run_sweep("simulation", g, seed=4, workers=1, progress=False)
    assert not np.array_equal(a.efficiency.to_numpy(), c.efficiency.to_numpy())


# ---- the built-in methods -------------------------------------------------------------
def test_analysis_method_matches_analyze():
    from tcpabr_model.markov import Scenario, analyze

    df = run_sweep("analysis", {"psi": [2, 20], "feedback": ["instcap", "none"]}, workers=1)
    assert list(df.columns[:2]) == ["psi", "feedback"]
    for _, row in df.iterrows():
        r = analyze(Scenario(psi=row.psi, feedback=row.feedback))
        assert row.optimistic == r.optimistic and row.conservative == r.conservative
        assert row.n_states == r.n_states and row.solver == "structured"
        assert row.prediction == r.prediction and row.mean_queueing_delay == r.mean_queueing_delay
        assert row.mean_source_delay == r.mean_source_delay and row.mean_queue == r.mean_queue
    assert {"optimistic", "conservative", "optimistic_eq18", "throughput_optimistic",
            "throughput_conservative", "mean_capacity", "loss_probability", "n_states",
            "residual"} <= set(df.columns)


def test_analysis_solver_key():
    df = run_sweep("analysis", [{"psi": 5, "delta": 8, "bmax": 3, "wmax": 16, "solver": "dense"}], workers=1)
    assert df.solver[0] == "dense" and df.status[0] == "ok"


def test_simulation_method_keys_and_tcp_settings():
    pts = [{**SIM_FIXED, "psi": 2, "delta": [40, 60], "feedback": "instcap", "tcp_wmax": 32,
            "tcp_variant": "reno"},
           {"feedback": "none", "rtt": [0.2], "tau": 0.8, "duration": 8.0, "warmup": 1.0, "replications": 2}]
    df = run_sweep("simulation", pts, workers=1, progress=False)
    assert (df.status == "ok").all(), df.error.tolist()
    assert df.psi.tolist() == [2, pytest.approx(4.0)]          # as given, and from the scenario
    assert df.n_connections.tolist() == [2, 1]
    assert df.overhead_factor.between(0.8, 0.9).all()   # 500-byte segments over AAL5 (0.849)
    for col in ("efficiency", "efficiency_hw", "efficiency_lo", "efficiency_hi", "efficiency_wire",
                "efficiency_wire_hw", "fairness", "fairness_hw", "clr", "flr", "replications",
                "eff_conn0", "eff_conn0_hw", "goodput_conn0_bps", "eff_conn1"):
        assert col in df.columns
    assert np.isnan(df.eff_conn1[1])
    assert df.efficiency_lo[0] <= df.efficiency[0] <= df.efficiency_hi[0]


@pytest.mark.parametrize("point, msg", [
    ({"psi": 2, "bogus": 1}, "bogus=1 is invalid: not a parameter of Scenario.from_normalized"),
    ({"rtt": [0.2], "buffer": 3}, "buffer=3 is invalid"),
    ({"psi": 2, "tcp_bogus": 1}, "tcp_bogus=1 is invalid"),
    ({"psi": 2, "normalized": "yes"}, "normalized='yes' is invalid"),
])
def test_simulation_method_bad_keys(point, msg):
    df = run_sweep("simulation", [point], workers=1, progress=False)
    assert df.status[0] == "error" and msg in df.error[0] and df.error[0].startswith("ValueError: ")


def test_closed_form_methods():
    from tcpabr_model.closed_forms import effcap_design, effective_capacity_two_state

    df = run_sweep("effective_capacity", Grid({"delta": [0.0, 1.0, float("inf")]},
                                              fixed={"p01": 0.1, "p10": 0.2, "c0": 1.0, "c1": 0.5}),
                   workers=1)
    assert df.effective_capacity.tolist() == [
        float(effective_capacity_two_state(0.1, 0.2, 1.0, 0.5, d)) for d in (0.0, 1.0, np.inf)]
    d = run_sweep("effcap_design", Grid({"delta": [0.2, 0.24]}, fixed={"s": 0.03}), workers=1)
    assert d.m.tolist() == [effcap_design(0.2, 0.03).M, 8] and d.n.tolist()[0] == 49


# ---- errors -------------------------------------------------------------------------
def test_failing_point_recorded_and_raise():
    g = Grid({"psi": [2, 0.5, 20]}, fixed={"delta": 8, "bmax": 3, "wmax": 16})
    df = run_sweep("analysis", g, workers=1)
    assert df.status.tolist() == ["ok", "error", "ok"]
    assert df.error[1].startswith("ValueError: psi=0.5 is invalid") and df.error[0] == ""
    assert df.psi[1] == 0.5 and np.isnan(df.optimistic[1]) and df.optimistic[2] > df.optimistic[0]
    with pytest.raises(SweepError) as ei:
        run_sweep("analysis", g, workers=2, on_error="raise")
    err = ei.value
    assert "1 of 3 sweep points failed" in str(err) and '"psi":0.5' in str(err)
    assert err.failures[0][0] == {"psi": 0.5, "delta": 8, "bmax": 3, "wmax": 16}
    assert err.frame.status.tolist() == ["ok", "error", "ok"]


def _not_a_dict(params, seed):
    return 3


def _reserved_key(params, seed):
    return {"seed": 1}


def test_method_contract_violations_are_point_errors():
    assert run_sweep(_not_a_dict, [{"x": 1}]).error[0] == "TypeError: method returned int, not a dict of results"
    assert "key 'seed' is invalid" in run_sweep(_reserved_key, [{"x": 1}]).error[0]


@pytest.mark.parametrize("kwargs, msg", [
    ({"method": "nope"}, "method='nope' is invalid"),
    ({"seed": -2}, "seed=-2 is invalid"),
    ({"workers": 0}, "workers=0 is invalid"),
    ({"on_error": "ignore"}, "on_error='ignore' is invalid"),
    ({"grid": "psi"}, "grid='psi' is invalid"),
    ({"method_options": [1]}, "method_options=[1] is invalid"),
    ({"progress": "yes"}, "progress='yes' is invalid"),
])
def test_run_sweep_bad_input(kwargs, msg):
    args = {"method": "analysis", "grid": [{"psi": 2}], **kwargs}
    method, grid = args.pop("method"), args.pop("grid")
    with pytest.raises(ValueError, match=msg.replace("[", r"\[").replace("]", r"\]")):
        run_sweep(method, grid, **args)


def test_register_method():
    register_method("sweep_test_square", _square)
    try:
        df = run_sweep("sweep_test_square", {"x": [1, 2, 3]}, workers=1)
        assert df.y.tolist() == [1, 4, 9]
        with pytest.raises(ValueError, match="already registered"):
            register_method("sweep_test_square", _not_a_dict)
    finally:
        METHODS.pop("sweep_test_square")


def _square(params, seed, offset=0):
    return {"y": params["x"] ** 2 + offset}


# ---- cache --------------------------------------------------------------------------
def test_cache_second_run_identical_and_cached(tmp_path):
    g = Grid({"psi": [1, 10]}, fixed={**SIM_FIXED, "feedback": "effcap"})
    a = run_sweep("simulation", g, seed=1, cache_dir=tmp_path, workers=1, progress=False)
    assert not a.cached.any() and len(list(tmp_path.glob("*.json"))) == 2
    b = run_sweep("simulation", g, seed=1, cache_dir=tmp_path, workers=2, progress=False)
    assert b.cached.all()
    pd.testing.assert_frame_equal(a.drop(columns="cached"), b.drop(columns="cached"))
    # another seed, option or method is another cache entry
    c = run_sweep("simulation", g, seed=2, cache_dir=tmp_path, workers=1, progress=False)
    assert not c.cached.any() and len(list(tmp_path.glob("*.json"))) == 4


def test_cache_env_var_and_options_in_key(tmp_path, monkeypatch):
    monkeypatch.setenv("TCPABR_CACHE_DIR", str(tmp_path / "env"))
    a = run_sweep(_square, {"x": [1, 2]}, workers=1, method_options={"offset": 1})
    b = run_sweep(_square, {"x": [1, 2]}, workers=1, method_options={"offset": 2})
    c = run_sweep(_square, {"x": [1.0, 2]}, workers=1, method_options={"offset": 1})
    assert a.y.tolist() == [2, 5] and b.y.tolist() == [3, 6] and not b.cached.any()
    assert c.cached.all() and c.y.tolist() == [2, 5]
    assert len(list((tmp_path / "env").glob("*.json"))) == 4


def test_corrupt_and_partial_cache_files_are_recomputed(tmp_path):
    g = Grid({"psi": [2, 5, 20]}, fixed={"delta": 8, "bmax": 3, "wmax": 16})
    a = run_sweep("analysis", g, cache_dir=tmp_path, workers=1)
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 3
    by_psi = {json.loads(f.read_text())["params"]: f for f in files}
    f0, f1 = by_psi[canonical_params(g[0])], by_psi[canonical_params(g[1])]
    f0.write_bytes(f0.read_bytes()[:40])                # partial write
    f1.write_text(json.dumps({"format": 1, "key": "wrong", "result": {}}))  # not this key
    from tcpabr_model.sweep._cache import CacheEntryDiscarded

    with pytest.warns(CacheEntryDiscarded) as rec:
        b = run_sweep("analysis", g, cache_dir=tmp_path, workers=1)
    assert sorted(str(w.message).split()[3] for w in rec) == sorted([str(f0), str(f1)])  # each file named
    assert b.cached.tolist() == [False, False, True]
    _frame_equal(a, b)
    assert json.loads(f0.read_text())["result"]["optimistic"] == a.optimistic[0]  # rewritten whole


def test_errors_not_cached(tmp_path):
    g = Grid({"psi": [0.5, 2]}, fixed={"delta": 8, "bmax": 3, "wmax": 16})
    run_sweep("analysis", g, cache_dir=tmp_path, workers=1)
    b = run_sweep("analysis", g, cache_dir=tmp_path, workers=1)
    assert b.cached.tolist() == [False, True] and b.status.tolist() == ["error", "ok"]


def test_duplicate_points_computed_once(tmp_path, monkeypatch):
    log = tmp_path / "log"
    monkeypatch.setenv("SWEEP_TEST_LOG", str(log))
    mod = _write_slow_module(tmp_path)
    df = run_sweep(mod.slow, [{"x": 1}, {"x": 2}, {"x": 1.0}], workers=1, method_options={"sleep": 0})
    assert df.y.tolist() == [1, 4, 1] and df.seed[0] == df.seed[2]
    assert sorted(log.read_text().split()) == ["1", "2"]


SLOW_MODULE = textwrap.dedent('''
    import os, time

    def slow(params, seed, sleep=0.25):
        time.sleep(sleep)
        with open(os.environ["SWEEP_TEST_LOG"], "a") as fh:
            fh.write(f"{params['x']}\\n")
        return {"y": params["x"] ** 2, "z": seed % 1009}
''')


def _write_slow_module(tmp_path):
    import importlib

    (tmp_path / "sweep_slow_mod.py").write_text(SLOW_MODULE)
    sys.path.insert(0, str(tmp_path))
    sys.modules.pop("sweep_slow_mod", None)
    return importlib.import_module("sweep_slow_mod")


def _entries(cache):
    """Finished cache entries: a kill between write and rename can leave a hidden
    ``.<key>.json.<random>.tmp.json`` file, which is not an entry (and is not read)."""
    return [f for f in cache.glob("*.json") if not f.name.startswith(".")]


def test_killed_sweep_resumes_without_recomputing(tmp_path, monkeypatch):
    mod = _write_slow_module(tmp_path)
    cache = tmp_path / "cache"
    n = 12
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import sweep_slow_mod
        from tcpabr_model.sweep import run_sweep
        run_sweep(sweep_slow_mod.slow, [{{"x": i}} for i in range({n})], seed=5,
                  cache_dir={str(cache)!r}, workers=1, progress=False)
    ''')
    env = {**os.environ, "SWEEP_TEST_LOG": str(tmp_path / "log1")}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(_entries(cache)) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    done_before = {json.loads(f.read_text())["params"] for f in _entries(cache)}
    assert 3 <= len(done_before) < n
    mtimes = {f: f.stat().st_mtime_ns for f in _entries(cache)}

    monkeypatch.setenv("SWEEP_TEST_LOG", str(tmp_path / "log2"))
    grid = [{"x": i} for i in range(n)]
    resumed = run_sweep(mod.slow, grid, seed=5, cache_dir=cache, workers=1, progress=False)
    assert (resumed.status == "ok").all()
    was_cached = [canonical_params(p) in done_before for p in grid]
    assert resumed.cached.tolist() == was_cached
    recomputed = {int(x) for x in (tmp_path / "log2").read_text().split()}
    assert recomputed == {i for i in range(n) if not was_cached[i]}
    assert all(f.stat().st_mtime_ns == t for f, t in mtimes.items())  # cached files untouched

    monkeypatch.setenv("SWEEP_TEST_LOG", str(tmp_path / "log3"))
    fresh = run_sweep(mod.slow, grid, seed=5, workers=1, method_options={"sleep": 0})
    _frame_equal(resumed, fresh)


def test_orphaned_temporaries_are_removed_but_fresh_ones_kept(tmp_path):
    from tcpabr_model.sweep import _cache

    cache = tmp_path / "cache"
    cache.mkdir()
    old = cache / ".abc.json.x1y2.tmp.json"
    fresh = cache / ".def.json.z3w4.tmp.json"
    entry = cache / "abc.json"
    for f in (old, fresh, entry):
        f.write_text("{}")
    past = time.time() - 2 * _cache.ORPHAN_AGE_S
    os.utime(old, (past, past))
    os.utime(entry, (past, past))
    run_sweep(_square, [{"x": 1}], cache_dir=cache, workers=1, progress=False)
    assert not old.exists()          # left by a killed run: removed
    assert fresh.exists()            # may be another sweep's write in progress: kept
    assert entry.exists()            # entries are never removed


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c"]),
                       st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True), max_size=3))
def test_grid_is_the_cartesian_product(axes):
    g = Grid(axes, fixed={"z": 0})
    n = int(np.prod([len(v) for v in axes.values()])) if axes else 1
    assert len(g) == n
    keys = {canonical_params(p) for p in g}
    assert len(keys) == n and all(p["z"] == 0 for p in g)
    for p in g:
        assert all(p[k] in axes[k] for k in axes)


def test_empty_grid_gives_empty_table():
    df = run_sweep("analysis", Grid(), workers=1)
    assert len(df) == 0 and list(df.columns) == ["status", "error", "seed", "seconds", "cached"]


def _nested(params, seed):
    # a method that sweeps itself: inside a pool worker it must run serially
    inner = run_sweep(_square, {"x": [params["x"], params["x"] + 1]}, progress=False)
    return {"total": int(inner.y.sum())}


def test_nested_sweep_in_pool_workers():
    df = run_sweep(_nested, {"x": [1, 2, 3]}, workers=2, progress=False)
    assert (df.status == "ok").all(), df.error.tolist()
    assert df.total.tolist() == [1 + 4, 4 + 9, 9 + 16]
