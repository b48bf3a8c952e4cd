"""analytics/ns3_check.py without ns-3 (CI has none): wrong input and the missing
bindings each give one line on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import importlib.util

import pytest

from _scripts import load_script

script = load_script("analytics/ns3_check.py", "ns3_check")


@pytest.mark.parametrize("argv,needle", [
    (["--delta", "-1"], "--delta must be > 0"),
    (["--buffers", "8,x"], "comma-separated integers"),
    (["--buffers", "0"], "integers >= 1"),
    (["--psi", "-1"], "numbers >= 0"),
    (["--psi", "a"], "comma-separated numbers"),
    (["--replications", "0"], "--replications must be >= 1"),
    (["--feedback", "ebr"], "--feedback must be none, instcap or effcap"),
    (["--feedback", "effcap", "--effcap-k", "1"], "--effcap-k must be an integer >= 2"),
    (["--prr", "linux"], "--prr must be ns3 or rfc6937"),
    (["--variants", "reno"], "timeout-only and/or sack"),
    (["--min-rto", "0"], "--min-rto must be > 0"),
    (["--duration", "5"], "--duration must be > 10"),
    (["--trace", "10,2"], "B,T0,T1"),
    (["--trace", "10,3,2"], "0 <= T0 < T1"),
])
def test_wrong_input_is_one_line_and_exit_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        script.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


@pytest.mark.skipif(importlib.util.find_spec("ns") is not None, reason="ns-3's bindings are installed here")
def test_without_ns3_it_says_how_to_install_it(capsys):
    with pytest.raises(SystemExit) as e:
        script.main(["--quick"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "pip install ns3==3.44.post0" in err and err.count("\n") == 1
