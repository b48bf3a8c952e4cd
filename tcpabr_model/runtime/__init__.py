"""What the long-running commands share at run time: worker pools that end with their parent
(:mod:`.pool`), output paths checked before any computing starts (:mod:`.paths`) and result files
written whole or not at all (:mod:`.atomic`), a progress bar for long work only (:mod:`.progress`),
OpenBLAS's thread count pinned for a block of work (:mod:`.blas`), and the fault report of a
command that fails on a defect of the toolkit (:mod:`.fault`).
Imports only the leaves (``_validate``, ``errors``); every room above may import it."""
