class SimpleEvaluator:
    """Passes when the response holds every `must_contain` word and no `banned` word.

    config: {"must_contain": [str], "banned": [str]}; matching ignores case.
    """

    def evaluate(self, goal: str, response: str, config: dict, ctx: dict) -> dict:
        text = response.casefold()
        required = [str(word).casefold() for word in config.get("must_contain", [])]
        banned = [str(word).casefold() for word in config.get("banned", [])]
        if any(word in text for word in banned):
            return {"passed": False, "feedback": "Banned content detected.", "rating": 2}
        if all(word in text for word in required):
            return {"passed": True, "feedback": "Meets the criteria.", "rating": 8}
        return {"passed": False, "feedback": "A required signal is missing.", "rating": 5}
