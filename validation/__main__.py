"""``python3 -m validation``: the same as ``tcpabr validate`` (see :mod:`tcpabr_model.validation`)."""

import sys

from tcpabr_model.validation.__main__ import main

sys.exit(main())
