"""The one TCP of both kernels (numba): a connection's sender, receiver and timers in
:mod:`.connection`, the variants' vocabulary in :mod:`tcpabr_model.sim.tcp.variants`.  Imports only
:mod:`tcpabr_model.sim.arrays`; imported by the kernels and the descriptions."""
