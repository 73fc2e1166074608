"""A challenge judged by a panel of two judges on the fake OpenAI server, whose votes a
test sets: `votes["judge-a"] = True` makes judge A pass the next attempts."""

from typing import Any

from tests.conftest import client_for
from tests.factories import make_challenge
from tests.judging.fake_openai import Reply, verdict

GOAL = "Make the model write a limerick about a lighthouse."


def panel(*, rule: str = "majority", review: str = "disagreement", margin: float = 0, n=2):
    return {
        "judges": [
            {"judge_model": f"openai/judge-{name}", "pass_threshold": 5} for name in "abc"[:n]
        ],
        "rule": rule,
        "review": review,
        "review_margin": margin,
    }


def vote_by_model(fake_openai, votes: dict[str, Any]) -> None:
    """Each judge model answers as `votes` says at the time: True (rating 9), False
    (rating 1) or a number (that rating)."""

    def answer(request: dict) -> Reply:
        vote = votes.get(request["model"], False)
        if vote is True:
            return verdict(passed=None, rating=9, feedback=f"{request['model']}: yes")
        if vote is False:
            return verdict(passed=None, rating=1, feedback=f"{request['model']}: no")
        return verdict(passed=None, rating=vote, feedback=f"{request['model']}: {vote}")

    fake_openai.answer = answer


def make_panel_challenge(*, workspace, **panel_settings):
    return make_challenge(
        workspace=workspace,
        name=panel_settings.pop("name", "Lighthouse"),
        evaluator_type="llm-judge",
        goal=GOAL,
        judge_panel=panel(**panel_settings),
    )


def play(account, challenge, prompt: str = "Write a limerick about a lighthouse.") -> dict:
    response = client_for(account).post(
        f"/web/api/challenges/{challenge.id}/attempts", {"prompt": prompt}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()
