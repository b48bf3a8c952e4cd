"""``tcpabr sweep`` refuses a grid whose every point the method refuses before computing (a typo in a
value: one line, exit 2, the first point's reason); a grid with some valid points runs and reports the
others as error rows (exit 1), as before."""

from __future__ import annotations

import pytest

from tcpabr_model.cli import main


@pytest.mark.parametrize("method, fragment", [("analysis", "psi='abc' is invalid"),
                                              ("simulation", "psi='abc' is invalid")])
def test_every_point_invalid_is_one_line(method, fragment, capsys):
    assert main(["sweep", method, "--grid", "psi=abc", "--fixed", "delta=8", "--fixed", "bmax=3",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "every point of the grid is invalid" in err and fragment in err


def test_some_valid_points_still_run(capsys):
    assert main(["sweep", "analysis", "--grid", "psi=abc,2", "--fixed", "delta=8", "--fixed", "bmax=3",
                 "--no-progress", "--cache", "none"]) == 1
    cap = capsys.readouterr()
    assert "2 points (0 from the cache, 1 failed)" in cap.out and "point failed" in cap.err
