"""The numba kernels: the single-bottleneck fast path (:mod:`.fast_path`), the general
network kernel (:mod:`.general`, with the port arrival and admission in
:mod:`.port_arrival`) and the capacity path cursor both read (:mod:`.capacity_cursor`).
Plain arrays in, arrays out.  Imports :mod:`..arrays`, :mod:`..tcp`, :mod:`..switch` and
:mod:`..abr`; imported only by the driver (:mod:`tcpabr_model.sim.driver`)."""
