"""v1alpha1 -> v1alpha2 policy conversion: the pure core behind ``desched migrate`` and v1alpha1 linting.

Plain data in, plain data out: no YAML library is imported here (file editing lives in ``rewrite.py`` and the
modules of its phases: ``_locate``, ``_plan``, ``_emit``, ``_verify``).
See :mod:`desched.migrate.convert` for the algorithm and the documented differences from upstream.
"""

from __future__ import annotations

from desched.migrate.convert import Conversion, ConversionError, Note, convert, is_v1alpha1, locate

__all__ = ["Conversion", "ConversionError", "Note", "convert", "is_v1alpha1", "locate"]
