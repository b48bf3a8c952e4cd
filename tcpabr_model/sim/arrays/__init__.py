"""Array layouts and the reference-count helper shared by every numba room of the simulator
(column constants of the kernels' state and parameter arrays; ``keep_alive``).  Imports
nothing from :mod:`tcpabr_model.sim`; every other room may import it."""
