"""A red/blue pairing in the review queue (SPEC §10): what the console's review rows show
of it and how a decision scores it. The queue itself (deciding once, the audit trail) is
challenges/services/reviews.py; this app registers itself there when it loads."""

from typing import Any

from challenges.models import Review
from redblue.teams.services.pairings import pairing_review_decide


class PairingReviewHandler:
    def decide(self, *, review: Review, decision: str) -> tuple[str, str]:
        return pairing_review_decide(review=review, decision=decision)

    def transcript(self, review: Review) -> dict[str, Any]:
        pairing = review.pairing
        return {
            "prompt": pairing.attack_submission.prompt if pairing.attack_submission else "",
            "defense": pairing.defense_submission.prompt if pairing.defense_submission else "",
            "response": pairing.response,
        }

    def judges(self, review: Review) -> list[dict[str, Any]]:
        """Every judge's verdict on every category, the disputed ones marked."""
        categories = (review.pairing.judge_output_raw or {}).get("categories") or {}
        return [
            {"category": code, "under_review": bool(stored.get("under_review")), **judge}
            for code, stored in categories.items()
            for judge in stored.get("judges") or []
        ]
