"""ABR presets (the slides' tables as data) and the queue divergence verdict."""

import numpy as np
import pytest

from tcpabr_model.sim.abr.divergence import queue_divergence
from tcpabr_model.sim.presets.abr_backbone import (
    WINDOW_CELLS, abr_preset_names, abr_presets, get_abr_preset, slides_source_params)


def test_slides_parameters_are_encoded():
    s = slides_source_params()
    assert (s.tbe, s.cdf, s.nrm, s.mrm, s.rif, s.rdf, s.mcr, s.adtf) == (512, 0.5, 32, 2, 1.0, 1 / 512, 0.0, 0.5)
    assert s.pcr == pytest.approx(155.52e6 / 424) and s.icr == pytest.approx(10e6 / 424)
    assert s.crm == 16
    assert WINDOW_CELLS == 24576


def test_every_table_row_is_a_preset():
    names = abr_preset_names()
    assert sum(n.startswith("abr_backbone_novbr_buf") for n in names) == 4
    assert sum(c.table == "Effect of VBR on-off times" for c in abr_presets().values()) == 9
    assert {"abr_erica_avg_off_d070_p20ms", "abr_vbr_d080_p10ms_an_az"} <= set(names)   # controls
    assert sum(n.startswith("abr_fbdelay_") for n in names) == 3
    assert sum(c.table.startswith("Effect of switch scheme") for c in abr_presets().values()) == 2
    assert {abr_presets()[f"abr_backbone_compare_{p}"].rate_allocation
            for p in ("erica", "instcap", "effcap")} == {"erica", "instcap", "effcap"}
    for c in abr_presets().values():
        assert "n_sources" in c.provenance and c.provenance["n_sources"].startswith("CHOICE")
        assert all(v.startswith(("stated", "CHOICE")) for v in c.provenance.values())


def test_delays_match_the_slides_rtt():
    assert get_abr_preset("abr_backbone_novbr_buf100").rtt_s == pytest.approx(0.030)
    for fd, rtt in ((1, 3), (5, 15), (10, 30)):
        c = get_abr_preset(f"abr_fbdelay_{fd}ms")
        assert c.feedback_delay_s == pytest.approx(fd * 1e-3)
        assert c.rtt_s == pytest.approx(rtt * 1e-3)
    # the slides' "17171 cells (1.56 x RTT)" implies an RTT of ~11,000 cells
    assert get_abr_preset("abr_backbone_novbr_buf1000").rtt_cells == pytest.approx(17171 / 1.56, rel=0.01)


def test_unknown_preset_and_bad_case():
    with pytest.raises(ValueError, match="^preset='nope'"):
        get_abr_preset("nope")
    c = get_abr_preset("abr_vbr_d080_p10ms")
    with pytest.raises(ValueError, match="^rate_allocation="):
        c.with_rate_allocation("bogus")
    from dataclasses import replace
    with pytest.raises(ValueError, match="^vbr_duty="):
        replace(c, vbr_duty=1.5)
    with pytest.raises(ValueError, match="^vbr_rate_mbps="):
        replace(c, vbr_rate_mbps=200.0)


LINK = 366792.0


def test_divergence_detector_on_synthetic_series():
    t = np.linspace(0.0, 10.0, 1001)
    grow = 5000.0 * t                                                  # 5000 cells/s growth
    assert queue_divergence(t, grow, LINK).diverges
    saw = 3000.0 * (1 + np.sin(2 * np.pi * t / 0.1))                   # bounded oscillation
    v = queue_divergence(t, saw, LINK)
    assert not v.diverges and abs(v.slope) < v.threshold
    settle = 20000.0 * (1 - np.exp(-t / 0.5))                          # rises then settles
    assert not queue_divergence(t, settle, LINK).diverges
    slow = 1000.0 * t                                                  # below 0.5 % of link
    assert not queue_divergence(t, slow, LINK).diverges
    late = np.where(t < 5, 0.0, 4000.0 * (t - 5))                      # starts growing mid-run
    assert queue_divergence(t, late, LINK).diverges
    drain = np.maximum(0.0, 50000 - 8000 * t)                          # draining queue
    assert not queue_divergence(t, drain, LINK).diverges


def test_divergence_detector_bad_input():
    with pytest.raises(ValueError, match="^link_cells_per_s="):
        queue_divergence([0, 1, 2, 3], [0, 1, 2, 3], 0.0)
    with pytest.raises(ValueError, match="^t "):
        queue_divergence([0, 1, 1, 3], [0, 1, 2, 3], 1.0)
    with pytest.raises(ValueError, match="^t, q"):
        queue_divergence([0, 1], [0, 1], 1.0)


def test_divergence_detector_ceiling_rule():
    t = np.linspace(0.0, 10.0, 1001)
    pinned = np.minimum(368640.0, 200000.0 * t)        # grows, then held by the TCP windows
    assert not queue_divergence(t, pinned, LINK).diverges
    v = queue_divergence(t, pinned, LINK, ceiling=368640.0)
    assert v.diverges and v.at_ceiling
    small = np.minimum(3000.0, 20000.0 * t)             # settles far below the ceiling
    assert not queue_divergence(t, small, LINK, ceiling=368640.0).diverges
    with pytest.raises(ValueError, match="^ceiling="):
        queue_divergence(t, small, LINK, ceiling=0.0)
