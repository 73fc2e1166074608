"""What the review queue needs of a red/blue pairing (SPEC §10: a panel may sit on a
red/blue suite). The redblue app provides it and registers it when it loads: this app may
not import that one (tests/test_import_floors.py), yet one queue holds both kinds."""

from typing import Any, Protocol

from challenges.models import Review


class PairingReviews(Protocol):
    """What the queue needs of a red/blue pairing's review; redblue provides it (this app
    may not import that one) and registers it when it loads."""

    def decide(self, *, review: Review, decision: str) -> tuple[str, str]:
        """Apply `decision` to the review's pairing, in the caller's transaction, which holds
        the review's row; (the pairing's verdict status before, after)."""
        ...

    def transcript(self, review: Review) -> dict[str, Any]: ...

    def judges(self, review: Review) -> list[dict[str, Any]]: ...


_pairing_reviews: list[PairingReviews] = []


def pairing_reviews_register(handler: PairingReviews) -> None:
    _pairing_reviews[:] = [handler]


def pairing_reviews() -> PairingReviews:
    if not _pairing_reviews:
        raise RuntimeError("The redblue app registers red/blue reviews when it loads.")
    return _pairing_reviews[0]
