"""Parameter sweeps: one mechanism for every figure, notebook and study.

- :class:`Grid` -- the points: cartesian product of lists plus fixed values,
  :meth:`Grid.from_points`, :meth:`Grid.from_file` (TOML / YAML); ``grid1 + grid2``
- :func:`run_sweep` -- evaluate a method at every point: per-point seeds, disk cache
  (resumable), local processes or a Dask cluster, tidy :class:`pandas.DataFrame`
- :func:`point_seed` -- the seed of one point (base seed, method, canonical parameters)
- :data:`METHODS`, :func:`register_method` -- the point functions (``analysis``,
  ``simulation``, ``effective_capacity``, ``effcap_design``)
- :func:`canonical_params` -- the canonical JSON identifying a point
- :class:`SweepError` -- raised by ``run_sweep(..., on_error="raise")``

See ``docs/sweeps.md`` and ``tcpabr sweep --help``.
"""

from ._cache import ENV_VAR as CACHE_ENV_VAR
from ._grid import RESERVED_COLUMNS, Grid, canonical_params
from ._methods import METHODS, SIMULATION_KEYS, build_sim_scenario, register_method
from ._runner import SweepError, point_seed, run_sweep

__all__ = ["CACHE_ENV_VAR", "Grid", "METHODS", "RESERVED_COLUMNS", "SIMULATION_KEYS", "SweepError",
           "build_sim_scenario", "canonical_params", "point_seed", "register_method", "run_sweep"]
