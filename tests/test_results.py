"""``to_dict()`` / ``to_flat_dict()`` / ``to_frame()`` of result objects (tcpabr_model._results)."""

from dataclasses import dataclass

import pandas as pd
import pytest

from tcpabr_model._results import ResultMixin, flatten, results_frame


def test_flatten_nested_estimates_and_lists():
    d = {"seed": 3, "efficiency": {"mean": 0.5, "half_width": 0.01},
         "goodput_bps": [{"mean": 1.0}, {"mean": 2.0}], "delta": (40.0, 60.0), "speed": {"cells": 7}}
    assert flatten(d) == {"seed": 3, "efficiency_mean": 0.5, "efficiency_half_width": 0.01,
                          "goodput_bps_0_mean": 1.0, "goodput_bps_1_mean": 2.0, "delta": [40.0, 60.0],
                          "speed_cells": 7}


@dataclass(frozen=True)
class _R(ResultMixin):
    a: float
    b: dict


def test_mixin_default_to_dict_and_frame():
    r = _R(1.5, {"x": 2})
    assert r.to_dict() == {"a": 1.5, "b": {"x": 2}}
    pd.testing.assert_frame_equal(r.to_frame(), pd.DataFrame([{"a": 1.5, "b_x": 2}]))
    assert results_frame([r, _R(2.5, {"x": 3})]).b_x.tolist() == [2, 3]
    with pytest.raises(ValueError, match=r"results\[0\]=int is invalid"):
        results_frame([1])


def test_analysis_result_to_frame():
    from tcpabr_model.markov import Scenario, analyze

    r = analyze(Scenario(delta=8, bmax=3, psi=5, wmax=16))
    row = r.to_frame()
    assert len(row) == 1 and row.optimistic[0] == r.optimistic and row.scenario_bmax[0] == 3
    assert set(r.to_dict()) <= {c.split("_")[0] for c in row.columns} | set(row.columns)


def test_simulation_and_network_results_have_the_mixin():
    from tcpabr_model.sim.results import NetResult
    from tcpabr_model.sim.results import SimulationResult

    assert issubclass(SimulationResult, ResultMixin) and issubclass(NetResult, ResultMixin)
    # their own to_dict (nested Estimates) wins over the mixin's
    assert SimulationResult.to_dict is not ResultMixin.to_dict and NetResult.to_dict is not ResultMixin.to_dict
