"""A trace with a gap of hours: ``trace fit`` and ``analyze --trace`` say so in one note (the text and
``notes`` in JSON) instead of quietly fitting a 3-hour outage; a trace without such a gap gets none."""

from __future__ import annotations

import json
from pathlib import Path

from tcpabr_model.capacity import read_trace
from tcpabr_model.capacity._trace import LONG_GAP_SECONDS, long_gap_note
from tcpabr_model.cli import main

DATA = Path(__file__).parent / "data"


def _gap_trace(tmp_path, gap_s):
    t = list(range(1, 10_001)) + [10_000 + int(gap_s * 1000) + k for k in range(1, 10_001)]
    p = tmp_path / "gap.down"
    p.write_text("\n".join(map(str, t)) + "\n")
    return p


def test_the_note_names_the_gap_and_its_share(tmp_path):
    p = _gap_trace(tmp_path, 3 * 3600)
    note = long_gap_note(read_trace(str(p)))
    assert note.startswith(f"{p} has no delivery opportunity for 10800 s (from 10 s, 99.8 % of its 10820-s period)")
    assert long_gap_note(read_trace(str(_gap_trace(tmp_path, LONG_GAP_SECONDS - 1)))) is None
    assert long_gap_note(read_trace(str(DATA / "markov3_outage.down"))) is None


def test_fit_and_analyze_print_it(tmp_path, capsys):
    p = str(_gap_trace(tmp_path, 3 * 3600))
    assert main(["trace", "fit", p, "--epoch", "0.1", "--json"]) == 0
    assert "10800 s" in json.loads(capsys.readouterr().out)["notes"][0]
    assert main(["analyze", "--trace", p, "--rtt", "0.1", "--bmax", "10", "--feedback", "none"]) == 0
    assert f"  note: {p} has no delivery opportunity for 10800 s" in capsys.readouterr().out


def test_a_tiny_level_is_not_printed_as_zero(tmp_path, capsys):
    # 3 hours with one opportunity every 1000 s: the low level is about 1e-3 packets/s, not 0
    t = list(range(1, 10_001)) + [10_000 + 1_000_000 * k for k in range(1, 11)] + \
        [11_000_000 + k for k in range(1, 10_001)]
    p = tmp_path / "sparse.down"
    p.write_text("\n".join(map(str, t)) + "\n")
    p = str(p)
    assert main(["trace", "fit", p, "--epoch", "0.1", "--no-outage", "--states", "2"]) == 0
    level0 = capsys.readouterr().out.splitlines()[2].split()
    assert level0[0] == "0" and float(level0[1]) > 0 and "e-" in level0[1]
