"""Refusals of ``tcpabr effcap`` / ``tcpabr formula`` and of the closed-form API (audit findings):
eq. 2 outside its domain, flags a mode does not use, non-numeric and non-finite arrays, file
messages naming the flag, and the units of the printed results."""

from __future__ import annotations

import numpy as np
import pytest

import tcpabr_model.closed_forms as cf
from tcpabr_model.cli import main
from tcpabr_model.sim import effcap_reference

TWO_STATE = ["--p01", "0.1", "--p10", "0.1", "--c0", "1", "--c1", "0.5"]


def _cli(argv, capsys):
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse usage errors
        rc = exc.code
    out = capsys.readouterr()
    return rc, out.out, out.err.strip()


def _refused(argv, capsys, *fragments):
    rc, out, err = _cli(argv, capsys)
    assert rc == 2, (out, err)
    assert out == "" and "\n" not in err and "Traceback" not in err
    for f in fragments:
        assert f in err, err
    return err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "P.txt").write_text("0.9 0.1\n0.2 0.8\n")
    (tmp_path / "Pnotstoch.txt").write_text("0.3 0.3\n0.2 0.8\n")   # row 1 sums to 0.6
    (tmp_path / "Pnan.txt").write_text("0.9 nan\n0.2 0.8\n")
    (tmp_path / "c.txt").write_text("1\n0.5\n")
    return tmp_path


# ---- 1. seed 002 eq. 2 only for T = b cwnd_max / (2 mss) >= 1 ------------------------------
def test_average_window_linear_refuses_T_below_one():
    with pytest.raises(ValueError, match=r"cwnd_max/mss=1000\.0/1460\.0 is invalid: .*>= .*2920"):
        cf.average_window_linear(1000, 1460)
    with pytest.raises(ValueError, match="cwnd_max/mss"):
        cf.average_window_linear(2, 2, acks_per_increment=1.5)     # 2*mss/b = 2.67 > 2
    # the domain's edge (T = 1) and ordinary values are unchanged
    assert cf.average_window_linear(2920, 1460) == 2920.0
    assert cf.average_window_linear(64, 1) == 48.5


def test_average_window_linear_sum_refuses_windows_above_cwnd_max():
    with pytest.raises(ValueError, match="cwnd_max/mss=1000.0/1460.0 is invalid"):
        cf.average_window_linear_sum(1000, 1460, 5)
    with pytest.raises(ValueError, match=r"T=5\.0 is invalid: must be in \[1, "):
        cf.average_window_linear_sum(3000, 1460, 5)
    assert cf.average_window_linear_sum(64, 1, 32) == 48.5
    assert cf.average_window_linear_sum(128, 1, 128, acks_per_increment=2) == 96.25


def test_cli_cwnd_avg_below_domain(capsys):
    _refused(["formula", "cwnd-avg", "--cwnd-max", "1000", "--mss", "1460"], capsys,
             "--cwnd-max/--mss=1000.0/1460 is invalid", "2920")


# ---- 2. two-state flags with --matrix ------------------------------------------------------
def test_effcap_refuses_two_state_flags_with_matrix(files, capsys):
    m = ["effcap", "--matrix", files / "P.txt", "--capacities", files / "c.txt", "--delta", "0.1"]
    _refused([*m, "--p01", "0.1"], capsys, "--p01 is ignored with --matrix")
    _refused([*m, "--c0", "1", "--p10", "0.2"], capsys, "--p10, --c0 are ignored with --matrix")


def test_effcap_refuses_capacities_without_matrix(files, capsys):
    _refused(["effcap", *TWO_STATE, "--capacities", files / "c.txt", "--delta", "0.1"], capsys,
             "--capacities is ignored without --matrix")


# ---- 3. flags a formula does not use; VALUES is optional -------------------------------------
@pytest.mark.parametrize("argv, flag", [
    ("formula window --cwnd-avg 64000 --rtt 0.1 --epsilon 0.1", "--epsilon"),
    ("formula atm --mss 512 --mu 3", "--mu"),
    ("formula fairness 1 2 --rtt 5", "--rtt"),
    ("formula window --cwnd-avg 64000 --rtt 0.1 --link-rate 155.52", "--link-rate"),   # at its default
    ("formula qos-delta --epsilon 1e-6 --bmax 10 --sonet", "--sonet"),
    ("formula effcap-design --rtt 200 --s 30 --mss 1024", "--mss"),
])
def test_formula_refuses_unused_flags(argv, flag, capsys):
    _refused(argv.split(), capsys, f"{flag} is not used by 'formula {argv.split()[1]}'")


def test_formula_refuses_values_it_does_not_use(capsys):
    _refused("formula window --cwnd-avg 64000 --rtt 0.1 1 2".split(), capsys, "VALUES (1 2) are not used")
    _refused("formula atm 3 --mss 512".split(), capsys, "VALUES (3) are not used")


def test_formula_without_arguments_requires_only_name(capsys):
    err = _refused(["formula"], capsys, "the following arguments are required: NAME")
    assert "VALUES" not in err


def test_formula_flags_it_uses_still_work(capsys):
    for argv in ("formula fifo-share --mu 10 1 2 3", "formula fairness 1 2 --json",
                 "formula atm --mss 1024 --link-rate 155.52 --sonet",
                 "formula effcap-design --rtt 200 --s 30 --k 8 --convention count",
                 "formula cwnd-avg --cwnd-max 64000 --mss 1000 --acks-per-increment 2 --rtt 0.1"):
        rc, _, err = _cli(argv.split(), capsys)
        assert rc == 0, (argv, err)


# ---- 4. --matrix messages: the flag, plain numbers ---------------------------------------
def test_effcap_matrix_not_stochastic_names_the_flag(files, capsys):
    err = _refused(["effcap", "--matrix", files / "Pnotstoch.txt", "--capacities", files / "c.txt",
                    "--delta", "0.1"], capsys, "--matrix", "row 1 sums to 0.6", "must sum to 1")
    assert "np." not in err


def test_effcap_matrix_nan_names_the_flag(files, capsys):
    _refused(["effcap", "--matrix", files / "Pnan.txt", "--capacities", files / "c.txt", "--delta", "0.1"],
             capsys, "--matrix", "row 1, column 2 holds nan")


def test_chain_validator_prints_plain_numbers():
    with pytest.raises(ValueError, match=r"^P\[0, :\]\.sum\(\)=0\.6 is invalid") as e:
        cf.effective_capacity([[0.3, 0.3], [0.2, 0.8]], [1, 0.5], 1.0)
    assert "np." not in str(e.value)
    with pytest.raises(ValueError, match=r"^P\[0, 1\]=nan is invalid"):
        cf.effective_capacity([[0.9, np.nan], [0.2, 0.8]], [1, 0.5], 1.0)
    with pytest.raises(ValueError, match=r"^c0=-1\.0 is invalid") as e:
        cf.effective_capacity_two_state(0.1, 0.1, [1.0, -1.0], 0.5, 1.0)
    assert "np." not in str(e.value)


# ---- 5. non-numeric arrays name the parameter ------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda: cf.block_sums("abc", 1), "samples"),
    (lambda: cf.effcap_estimate("abc", 1, 1.0), "samples"),
    (lambda: cf.effcap_eq26_terms("abc", 1, 1.0), "samples"),
    (lambda: cf.effcap_feedback_series("abc", 1, 1), "samples"),
    (lambda: cf.effcap_min_block_average("abc", 1), "samples"),
    (lambda: cf.effcap_eq24("abc", 1, 1.0), "block_sum_samples"),
    (lambda: cf.effective_capacity_two_state("abc", 0.1, 1, 0.5, 1.0), "p01"),
    (lambda: cf.effective_capacity_two_state(0.1, 0.1, 1, 0.5, "abc"), "delta"),
    (lambda: cf.jain_index("abc"), "x"),
    (lambda: cf.fifo_share(1.0, "abc"), "occupancy"),
    (lambda: cf.efficiency_seed000("abc", 1.0), "throughputs"),
    (lambda: cf.efficiency_seed001("abc"), "goodputs"),
    (lambda: cf.throughput_from_window("abc", 0.1), "cwnd_avg_bytes"),
    (lambda: cf.throughput_from_window(64000, "abc"), "rtt_s"),
    (lambda: cf.effective_capacity("abc", [1.0], 1.0), "P"),
    (lambda: cf.effective_capacity([[1.0]], "abc", 1.0), "c"),
])
def test_non_numeric_array_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name}='abc' is invalid: must be a real number"):
        call()


def test_effcap_eq24_names_block_sum_samples():
    with pytest.raises(ValueError, match=r"^block_sum_samples\.shape=\(0,\) is invalid"):
        cf.effcap_eq24([], 1, 1.0)
    with pytest.raises(ValueError, match=r"^block_sum_samples\[1\]=nan is invalid"):
        cf.effcap_eq24([1.0, np.nan], 1, 1.0)


# ---- 6. effcap_reference: finite, non-empty -------------------------------------------------
@pytest.mark.parametrize("x, fragment", [
    (np.full(19, np.nan), "x[0]=nan is invalid"),
    ([1.0, np.inf], "x[1]=inf is invalid"),
    ([], "x.shape=(0,) is invalid"),
    ("abc", "x='abc' is invalid"),
])
def test_effcap_reference_refuses_bad_series(x, fragment):
    with pytest.raises(ValueError) as e:
        effcap_reference(x, 2, 2)
    assert str(e.value).startswith(fragment)


def test_effcap_reference_values_unchanged():
    np.testing.assert_array_equal(effcap_reference([1.0, 2.0, 3.0], 2, 2), [1.0, 1.0, 1.5])


# ---- 7. units in the printed lines ------------------------------------------------------------
def test_printed_results_carry_units(files, capsys):
    rc, out, _ = _cli(["effcap", *TWO_STATE, "--delta", "0.1"], capsys)
    assert rc == 0 and "= 0.7222208282 packets/slot" in out and "delta=0.1 per packet" in out
    rc, out, _ = _cli(["effcap", "--matrix", files / "P.txt", "--capacities", files / "c.txt", "--delta", "0.1"],
                      capsys)
    assert rc == 0 and "packets/slot" in out
    rc, out, _ = _cli("formula cwnd-avg --cwnd-max 64974 --mss 1460".split(), capsys)
    assert rc == 0 and out.strip() == "average window (seed 002 eq. 2) = 49460.5 bytes"
    rc, out, _ = _cli("formula cwnd-avg --cwnd-max 64974 --mss 1460 --rtt 0.1".split(), capsys)
    assert rc == 0 and "49460.5 bytes" in out and "3.95684 Mbps" in out   # --rtt shows in the text too
    rc, out, _ = _cli("formula atm --mss 1024".split(), capsys)
    assert rc == 0 and "TCP-layer max 130.6 Mbps (link 155.52 Mbps" in out
