"""The ABR end systems (TM 4.0): the source and destination rules (:mod:`.source`), RM cells
in the general kernel (:mod:`.rm_cells`), the arrays built for and read back from the kernel
(:mod:`.kernel_arrays`), the queue-divergence verdict (:mod:`.divergence`) and a greedy
closed loop without TCP (:mod:`.greedy_loop`).  Imports :mod:`..arrays` and :mod:`..switch`;
imported by the kernels, the descriptions and the presets."""
