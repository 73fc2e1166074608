import math
from typing import Any


def is_number(value: Any) -> bool:
    """A finite int or float from parsed JSON; True and False are not numbers here."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# The largest offset, index or other count a query string may carry: far beyond any list
# here, and well inside the database's integers.
QUERY_NUMBER_MAX = 10**9


class NumberRefused(ValueError):
    """A number from a request outside its bounds; the message names it and the range."""

    def __init__(self, *, name: str, minimum: int, maximum: int) -> None:
        self.name = name
        self.range = f"a whole number from {minimum} to {maximum}"
        super().__init__(f"'{name}' must be {self.range}.")


def bounded_int(raw: Any, *, name: str, default: int, minimum: int, maximum: int) -> int:
    """Every number a request names (`limit`, `offset`, `index`, a timestamp) as an int
    within bounds, before it reaches a query; NumberRefused otherwise. Each surface renders
    the refusal in its own error shape."""
    if raw is None or raw == "":
        return default
    value = None
    if not isinstance(raw, bool) and not (isinstance(raw, str) and len(raw) > 30):
        try:
            value = int(raw)
        except (TypeError, ValueError, OverflowError):
            value = None
    if value is None or not minimum <= value <= maximum:
        raise NumberRefused(name=name, minimum=minimum, maximum=maximum)
    return value
