class WeightedScorer:
    """success_bonus + rating * rating_weight - seconds * time_penalty - tokens * token_penalty.

    Never below zero; every weight is optional in config.
    """

    def score(self, metrics: dict, config: dict, ctx: dict) -> dict:
        base = float(config.get("success_bonus", 100)) if metrics.get("succeeded") else 0.0
        rating = metrics.get("rating") or 0
        elapsed_ms = metrics.get("elapsed_ms") or 0
        tokens = metrics.get("tokens_total") or 0
        score = (
            base
            + rating * float(config.get("rating_weight", 10))
            - (elapsed_ms / 1000.0) * float(config.get("time_penalty", 1.0))
            - tokens * float(config.get("token_penalty", 0.01))
        )
        return {"score": max(score, 0.0)}
