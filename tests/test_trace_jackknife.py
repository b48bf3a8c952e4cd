"""The prediction's jackknife over a trace (docs/traces.md sec. 7.2zd): ``capacity.trace_less_block``,
``trace_study.jackknife_link`` and ``tcpabr analyze --trace --jackknife J``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tcpabr_model.capacity import Trace, read_trace, trace_less_block
from tcpabr_model.cli import main
from tcpabr_model.trace_study import analyze_link, fit_link, jackknife_link


def _write(tmp_path, lines, name="t.trace"):
    path = tmp_path / name
    path.write_text("\n".join(map(str, lines)) + "\n")
    return path


def _even(per: int, period_ms: int = 20, periods: int = 1000):
    return [k * period_ms + (i * period_ms) // per + 1 for k in range(periods) for i in range(per)]


def test_less_block_by_hand():
    """One opportunity every ms for 1 s, four blocks: without any one of them, the times 1..750 ms."""
    t = Trace(np.arange(1, 1001), name="ms")
    for j in range(4):
        x = trace_less_block(t, j, 4)
        assert x.period_ms == 750 and x.n_opportunities == 750
        assert np.array_equal(x.times_ms, np.arange(1, 751))
    assert trace_less_block(t, 1, 4).name == "ms less (0.25, 0.5] s"


def test_less_block_keeps_every_other_opportunity():
    rng = np.random.default_rng(3)
    times = np.sort(rng.integers(1, 5001, size=2000))
    times[-1] = 5000
    t = Trace(times, name="random")
    T = t.period_ms
    u = np.sort((t.times_ms - 1) % T + 1)
    for blocks in (2, 3, 7):
        for j in range(blocks):
            x = trace_less_block(t, j, blocks)
            lo = 0 if j == 0 else int(u[np.searchsorted(u, j * T / blocks)])
            hi = int(u[np.searchsorted(u, (j + 1) * T / blocks)])
            removed = int(((u > lo) & (u <= hi)).sum())
            assert x.n_opportunities + removed == t.n_opportunities
            assert x.period_ms == T - (hi - lo)


@pytest.mark.parametrize("kw, msg", [({"j": 0, "blocks": 1}, "blocks=1 is invalid"),
                                     ({"j": 4, "blocks": 4}, "j=4 is invalid"),
                                     ({"j": -1, "blocks": 4}, "j=-1 is invalid")])
def test_less_block_is_checked(kw, msg):
    with pytest.raises(ValueError, match=msg):
        trace_less_block(Trace(np.arange(1, 101)), **kw)


def test_jackknife_of_an_unchanging_link_is_exact(tmp_path):
    """One opportunity every ms for 20 s, cut into four blocks of 250 epochs of 20 ms: every part fits the
    same chain, every prediction is the window-limited 3 of 20 packets per round trip, and the standard error
    is 0."""
    tr = read_trace(_write(tmp_path, range(1, 20001)))
    jk = jackknife_link(tr, 0.02, 8, "none", blocks=4, wmax=3, fit={"patterns": 2})
    assert jk.blocks == 4 and len(jk.predictions) == 4
    assert all(p == pytest.approx(0.15, rel=1e-3) for p in jk.predictions)
    assert len(set(jk.predictions)) == 1 and jk.standard_error == 0.0
    assert jk.conservative_se == 0.0 and jk.optimistic_se == 0.0


def _changing(tmp_path):
    """A link whose first fifth serves 2 packets per 20-ms epoch and the rest 5 and 9 in turn."""
    lines = []
    for k in range(1500):
        per = 2 if k < 300 else (5 if (k // 10) % 2 else 9)
        lines += [k * 20 + (i * 20) // per + 1 for i in range(per)]
    return _write(tmp_path, lines, "changing.trace")


def test_jackknife_of_a_changing_link(tmp_path):
    """The parts differ, each prediction is that part's own analysis, and the errors are the delete-a-group
    jackknife's."""
    tr = read_trace(_changing(tmp_path))
    jk = jackknife_link(tr, 0.02, 4, "none", blocks=5, wmax=20, fit={"patterns": 2})
    x = np.array(jk.predictions)
    assert jk.standard_error == pytest.approx(math.sqrt(4 / 5 * np.sum((x - x.mean()) ** 2)), rel=1e-12)
    assert jk.standard_error > 0.0
    for parts, se in ((jk.conservative, jk.conservative_se), (jk.optimistic, jk.optimistic_se)):
        v = np.array(parts)
        assert se == pytest.approx(math.sqrt(4 / 5 * np.sum((v - v.mean()) ** 2)), rel=1e-12)
    own = analyze_link(fit_link(trace_less_block(tr, 0, 5), 0.02, patterns=2), 4, "none", wmax=20)
    assert jk.predictions[0] == own.prediction
    assert jk.conservative[0] == own.conservative and jk.optimistic[0] == own.optimistic
    assert all(c <= p <= o for c, p, o in zip(jk.conservative, jk.predictions, jk.optimistic))


def test_cli_jackknife(tmp_path, capsys):
    path = _write(tmp_path, range(1, 20001))
    assert main(["analyze", "--trace", str(path), "--rtt", "0.02", "--bmax", "8", "--wmax", "3", "--feedback", "none",
                 "--patterns", "2", "--jackknife", "3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["jackknife"]["blocks"] == 3 and len(d["jackknife"]["predictions"]) == 3
    assert d["jackknife"]["standard_error"] == 0.0
    assert d["jackknife"]["band_with_fit"] == [d["conservative"], d["optimistic"]]   # nothing to widen
    assert main(["analyze", "--trace", str(path), "--rtt", "0.02", "--bmax", "8", "--wmax", "3", "--feedback", "none",
                 "--patterns", "2", "--jackknife", "3"]) == 0
    assert "jackknife over the trace: standard error 0.0000" in capsys.readouterr().out


@pytest.mark.parametrize("args, msg", [(["--jackknife", "5"], "--jackknife is used only with --trace"),
                                       (["--trace", "T", "--rtt", "0.02", "--bmax", "8", "--jackknife", "1"],
                                        "--jackknife=1 is invalid: must be an integer in [2, 50]")])
def test_cli_jackknife_refusals(tmp_path, capsys, args, msg):
    path = _write(tmp_path, _even(5))
    args = [str(path) if a == "T" else a for a in args]
    assert main(["analyze", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]


def test_cli_band_with_the_fit(tmp_path, capsys):
    """Each bound is moved out by two of its jackknife standard errors, within [0, 1]."""
    assert main(["analyze", "--trace", str(_changing(tmp_path)), "--rtt", "0.02", "--bmax", "4", "--wmax", "20",
                 "--feedback", "none", "--patterns", "2", "--jackknife", "5", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    jk = d["jackknife"]
    assert jk["conservative_se"] > 0.0 and jk["optimistic_se"] > 0.0
    assert jk["band_with_fit"] == [max(0.0, d["conservative"] - 2 * jk["conservative_se"]),
                                   min(1.0, d["optimistic"] + 2 * jk["optimistic_se"])]


def test_a_part_too_short_is_named(tmp_path, capsys):
    """Eleven 20-ms epochs fit (the whole trace) but their halves do not: the refusal names the part."""
    path = _write(tmp_path, range(1, 221), "eleven.trace")
    args = ["analyze", "--trace", str(path), "--rtt", "0.02", "--bmax", "4", "--feedback", "none", "--wmax", "10"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args + ["--jackknife", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "jackknife part 1 of 2" in err[0] and "less (0, 0.11] s" in err[0]
