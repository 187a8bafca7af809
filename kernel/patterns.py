"""Regular expressions compiled on first use: a short run (one policy file) pays only for the patterns of what it
meets. Compiling is most of what a pattern costs there (tens to hundreds of microseconds each)."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

__all__ = ["lazy"]


def lazy(source: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """A function returning ``re.compile(source, flags)``, compiled at its first call and the same object after."""
    return functools.cache(functools.partial(re.compile, source, flags))
