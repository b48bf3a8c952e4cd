"""The switch output port: frame admission (drop) policies (:mod:`.drop_policies`), the core
paper's INSTCAP / EFFCAP rate allocation (:mod:`.rate_allocation`) and ERICA / ERICA+
(:mod:`.erica`).  Imports only :mod:`..arrays`; imported by the ABR room and the kernels."""
