"""The numba kernels of the Markov renewal engine: plain scalars and arrays in, tuples and
arrays out, no validation (the public API in :mod:`tcpabr_model.markov` validates).

``interval``
    one round trip of the embedded chain: the dynamics of (A, B, D) and the binomial laws of
    the window (docs/model.md secs. 3-4, 11);
``patterns``
    TCP alone over service patterns: the build's shared-prefix replays of an interval and the
    queue's exact integral along them (secs. 11, 13);
``occupancy``
    the queue's exact integral over a loss-free interval without patterns (sec. 13);
``recovery``
    fast retransmit and recovery (``tcp='sack'``): the whole loss interval, the loss-event
    codes (sec. 12);
``enumeration``
    the breadth-first enumeration of the reachable states (the skeleton, secs. 5-5a);
``stateset``
    the build's state index (a hash set of int64 keys) and growable arrays;
``assemble``
    the rate chain multiplied in: rows of T and L, the CSR of P (sec. 8);
``structured``
    the structured stationary solve over the loss-free part's SCC order (sec. 8);
``iterative``
    the large SCC blocks of that solve by ILU(0)-preconditioned GMRES (sec. 8, "Large blocks");
``classes``
    Tarjan's SCCs and the closed classes, on the graph read from the skeleton (sec. 5a item 9).

Only :mod:`tcpabr_model.markov` imports these.
"""
