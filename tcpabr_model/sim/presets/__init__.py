"""The seeds' network configurations by name, each with per-parameter provenance
(:mod:`.catalogue`: ``preset``, ``preset_names``), built from the UBR+/GFR networks of seeds
000-002 (:mod:`.ubr_gfr`) and the ABR backbone cases of seed 003 (:mod:`.abr_backbone`);
``tcpabr presets`` in :mod:`.cli`.  Imports the descriptions (:mod:`tcpabr_model.sim.network`)
and the ABR room; imported only by the command line and the sweeps."""
