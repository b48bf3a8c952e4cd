"""analytics/instcap_backlog.py (docs/validity.md, "What is left, by place"): the trace it samples
every time unit reads the simulator's own buffers, and its tables are well formed."""

import numpy as np

from _scripts import load_script


def test_sampled_trace_reads_the_simulators_buffers_and_restores_the_driver():
    import tcpabr_model.sim.driver as driver

    mod = load_script("analytics/instcap_backlog.py", "instcap_backlog")
    plain = driver.fast_path_inputs
    tr = mod.sampled_trace(psi=20.0, delta=20, bmax=10, units=2e4, seed=1)
    assert driver.fast_path_inputs is plain
    t = tr["time"]
    assert np.allclose(np.diff(t), 1.0)          # one sample per time unit
    # the samples' mean segmentation buffer is the simulator's own time average (packets), to the
    # sampling's resolution
    measured = tr["a"][t >= tr["warmup"]].mean()
    assert abs(measured - tr["mean_source_frames"]) <= 0.03 * tr["mean_source_frames"] + 0.05
    assert set(np.unique(tr["cap"])) <= {0.0, 1.0}


def test_compare_tables():
    mod = load_script("analytics/instcap_backlog.py", "instcap_backlog")
    res = mod.compare(psi=20.0, delta=20, bmax=10, units=4e4, seed=1)
    lv = res["levels"]
    assert abs(lv.chain_epoch_share.sum() - 1.0) < 1e-9 and abs(lv.sim_ca_epoch_share.sum() - 1.0) < 1e-9
    cond = res["a_given_w"]
    for level in ("high", "low"):
        assert abs(cond[cond.level == level].chain_share.sum() - 1.0) < 1e-9
    d = res["drops"]
    ok = d.chain_p_loss.notna()
    assert ((d.chain_p_loss[ok] >= -1e-9) & (d.chain_p_loss[ok] <= 1 + 1e-9)).all()
    s = res["summary"].iloc[0]
    assert 0 <= s.sim_p_loss_per_drop <= 1 and -1e-9 <= s.chain_p_loss_per_drop <= 1 + 1e-9
