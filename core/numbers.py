import math
from typing import Any


def is_number(value: Any) -> bool:
    """A finite int or float from parsed JSON; True and False are not numbers here."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
