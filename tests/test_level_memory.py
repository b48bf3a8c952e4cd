"""analytics/level_memory.py: the links made from a fitted half (its own path, first-order,
sojourn and second-order chains) and one small point on the shipped 3-level trace."""

from __future__ import annotations

import numpy as np

from _scripts import ROOT, load_script

from tcpabr_model.capacity import bin_trace, read_trace
from tcpabr_model.trace_study import fit_labels, trace_halves


def _lm():
    return load_script("analytics/level_memory.py", "level_memory")


def test_the_sojourn_chain_keeps_fixed_sojourns():
    """Every level held exactly 3 epochs, levels 0 -> 1 -> 0: the age chain (cap 4) repeats it
    exactly; a first-order chain would stay with probability 2/3, geometric sojourns."""
    lm = _lm()
    lab = np.array([0, 0, 0, 1, 1, 1] * 50)
    x = lm._age_path(lab, 2, 600, np.random.default_rng(0))
    runs = np.diff(np.flatnonzero(np.diff(x) != 0))
    assert set(runs.tolist()) == {3}


def test_links_and_one_point():
    lm = _lm()
    data = ROOT / "tests" / "data"
    half = trace_halves(read_trace(data / "markov3_outage.down"))[0]
    made = lm.links_of(half, 0.2, 1)
    # the own path serves, epoch by epoch, the level the fit gave that epoch of the half
    lab = np.asarray(fit_labels(made["_one"].fit, half, 0.2))
    own = bin_trace(made["own_path"], 0.2).rates
    levels = np.asarray(made["_one"].model.levels)
    assert own.size == lab.size
    assert np.all([min(abs(own[t] - r) for r in np.concatenate(
        [[o.size / 0.2 for o in made["_one"].service.offsets[lab[t]]]])) < 1e-6 for t in range(lab.size)])
    assert made["chain2"].period_ms == made["chain1"].period_ms
    assert made["_two"].model.n_levels >= made["_one"].model.n_levels and levels.min() >= 0
    seen = []
    df = lm.run(["markov3_outage.down"], (0.2,), (2.0,), 1, 5.0, 1, 1, log=lambda *a, **k: seen.append(a),
                trace_dir=data)
    assert len(df) == 4 and len(seen) == 4
    for k in lm.LINKS:
        assert df[k].between(0.0, 1.5).all()
    md = lm.summary(df)
    assert "chain2" in md and "own_path" in md
