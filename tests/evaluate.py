"""Judging one output from a sync test: the secret looked up as a caller does, then the
one (async) evaluation."""

from asgiref.sync import async_to_sync

from challenges.services.evaluation import challenge_evaluate_async
from challenges.services.secrets import secret_value_for
from judging.verdicts import Verdict


def evaluate(*, challenge, output: str, prompt: str = "", variables=None, end_user=None) -> Verdict:
    secret = secret_value_for(challenge=challenge, end_user=end_user)
    return async_to_sync(challenge_evaluate_async)(
        challenge=challenge, secret=secret, output=output, prompt=prompt, variables=variables
    )
