"""The Dask path of ``run_sweep`` gives the same table as the local process pool."""

from distributed import Client, LocalCluster

from tcpabr_model.sweep import Grid, run_sweep

from test_sweep import SIM_FIXED, _frame_equal


def test_dask_local_cluster_matches_process_pool(tmp_path):
    g = Grid({"psi": [1, 10], "feedback": ["instcap", "effcap"]}, fixed=SIM_FIXED) + \
        Grid.from_points([{"psi": 0.5, "delta": 40, "bmax": 0}])      # one failing point
    pool = run_sweep("simulation", g, seed=11, workers=2, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        dask = run_sweep("simulation", g, seed=11, client=client, cache_dir=tmp_path, progress=False)
    _frame_equal(pool, dask)
    assert dask.status.tolist() == ["ok"] * 4 + ["error"] and "bmax=0 is invalid" in dask.error[4]
    assert len(list(tmp_path.glob("*.json"))) == 4          # written as the points finished
    again = run_sweep("simulation", g, seed=11, cache_dir=tmp_path, workers=1, progress=False)
    assert again.cached.tolist() == [True] * 4 + [False]
    _frame_equal(pool, again)
