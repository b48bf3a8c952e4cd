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


def test_periodic_train_loss_exact_cases():
    mod = load_script("analytics/instcap_backlog.py", "instcap_backlog")
    f = mod.periodic_train_loss
    # Delta 40, B_max 10, half rate: 25 packets lose when the first run passes 20 packets or the
    # second does (L1 < 5): (5 + 5) / 25 of the phases; 20 packets never; the pipe always
    assert abs(f(25, 40, 10, 0.5) - 0.4) < 1e-12
    assert f(20, 40, 10, 0.5) == 0.0
    assert f(40, 40, 10, 0.5) == 1.0 and f(55.7, 40, 10, 0.5) == 1.0
    # 30 packets: a gap of 10 drains 5, so both runs together reach exactly 10 (no loss) unless one
    # run alone passes 20 packets: L1 > 20 or L1 < 10, i.e. (10 + 10) / 30 of the phases
    assert abs(f(30, 40, 10, 0.5) - 2 / 3) <= 1 / 2000     # to the resolution of the 2000 phases
