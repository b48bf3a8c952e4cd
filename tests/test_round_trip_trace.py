"""The round trip with the transmission on a measured link (docs/traces.md sec. 7.2y):
``fit_link(..., round_trip='transmission')`` and ``tcpabr analyze --trace --round-trip transmission``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tcpabr_model.capacity import read_trace
from tcpabr_model.cli import main
from tcpabr_model.trace_study import analyze_link, fit_link, transmission_share


def _even_trace(tmp_path, per: int, period_ms: int = 20, periods: int = 2000):
    """``per`` opportunities every ``period_ms`` ms, evenly spread: one level of ``per`` packets per epoch."""
    lines = [k * period_ms + (i * period_ms) // per + 1 for k in range(periods) for i in range(per)]
    path = tmp_path / f"even{per}.trace"
    path.write_text("\n".join(map(str, lines)) + "\n")
    return path


def test_transmission_share_and_epoch_by_hand(tmp_path):
    """5 packets per 20-ms epoch: a gap of 4 ms between opportunities, tx = 1/5 of the round trip, so the
    chain is fitted at epoch 24 ms; its level is the same 250 packets per second."""
    tr = read_trace(_even_trace(tmp_path, 5))
    a = fit_link(tr, 0.02, patterns=2)
    assert transmission_share(a) == pytest.approx(0.2, abs=1e-12)
    b = fit_link(tr, 0.02, patterns=2, round_trip="transmission")
    assert b.rtt == pytest.approx(0.024, abs=1e-12)
    assert b.propagation == 0.02 and b.transmission == pytest.approx(0.2, abs=1e-12)
    assert np.allclose(b.model.levels, a.model.levels)
    d = b.describe()
    assert d["round_trip"] == "transmission" and d["propagation_s"] == 0.02 and d["epoch_s"] == pytest.approx(0.024)
    assert "propagation_s" not in a.describe()


def test_propagation_is_the_default_bit_for_bit(tmp_path):
    tr = read_trace(_even_trace(tmp_path, 7))
    a = analyze_link(fit_link(tr, 0.02, patterns=2), 4, "none", wmax=32)
    b = analyze_link(fit_link(tr, 0.02, patterns=2, round_trip="propagation"), 4, "none", wmax=32)
    assert a.prediction == b.prediction and a.conservative == b.conservative


def test_the_longer_epoch_lowers_a_window_limited_flow(tmp_path):
    """A window below the pipe delivers a window per round trip: with the round trip 20 % longer the
    prediction falls (the chain's own epoch) while the level is the same."""
    tr = read_trace(_even_trace(tmp_path, 5))
    a = analyze_link(fit_link(tr, 0.02, patterns=2), 8, "none", wmax=3)
    b = analyze_link(fit_link(tr, 0.02, patterns=2, round_trip="transmission"), 8, "none", wmax=3)
    assert a.prediction == pytest.approx(3 / 5, rel=1e-3)          # 3 of the 5 packets per round trip
    assert b.prediction == pytest.approx(3 / 6, rel=1e-3)          # 3 of the 6 the 24-ms round trip serves


def test_round_trip_is_checked(tmp_path):
    tr = read_trace(_even_trace(tmp_path, 5))
    with pytest.raises(ValueError, match="round_trip='both' is invalid"):
        fit_link(tr, 0.02, round_trip="both")


def test_cli(tmp_path, capsys):
    path = _even_trace(tmp_path, 5)
    assert main(["analyze", "--trace", str(path), "--rtt", "0.02", "--bmax", "8", "--wmax", "3", "--feedback", "none",
                 "--patterns", "2", "--round-trip", "transmission", "--json", "--no-progress"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["model"]["epoch_s"] == pytest.approx(0.024) and d["model"]["propagation_s"] == 0.02
    assert d["prediction"] == pytest.approx(0.5, rel=1e-3)
    assert main(["analyze", "--trace", str(path), "--rtt", "0.02", "--bmax", "8", "--feedback", "none",
                 "--patterns", "2", "--round-trip", "transmission", "--no-progress"]) == 0
    assert "the round trip with the transmission: 0.02 s x (1 + 0.200)" in capsys.readouterr().out
