"""``python -m desched`` is the ``desched`` command."""

from __future__ import annotations

import sys

from desched.cli import main

sys.exit(main())
