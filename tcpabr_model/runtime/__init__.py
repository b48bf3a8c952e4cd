"""What the long-running commands share at run time: worker pools that end with their parent
(:mod:`.pool`) and output paths checked before any computing starts (:mod:`.paths`).  Imports
only the leaves (``_validate``, ``errors``); every room above may import it."""
