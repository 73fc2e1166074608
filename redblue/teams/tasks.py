from celery import shared_task

from redblue.teams.evaluation import TargetError
from redblue.teams.services.pairings import pairing_judge
from redblue.teams.services.regression import defense_regression_run
from redblue.teams.services.submissions import PAIRING_JUDGE_TASK, REGRESSION_TASK


@shared_task(bind=True, name=PAIRING_JUDGE_TASK, acks_late=True, max_retries=3)
def pairing_judge_task(self, pairing_id: str) -> str:
    # Eagerly (the embedded default) there is nobody to retry later: fail at once.
    last_try = self.request.is_eager or self.request.retries >= self.max_retries
    try:
        return pairing_judge(pairing_id=pairing_id, last_try=last_try)
    except TargetError as exc:
        raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from None


@shared_task(bind=True, name=REGRESSION_TASK, acks_late=True, max_retries=3)
def defense_regression_task(self, submission_id: str) -> str:
    """A new defence against the challenge's regression set (docs/redblue.md)."""
    last_try = self.request.is_eager or self.request.retries >= self.max_retries
    try:
        return defense_regression_run(submission_id=submission_id, last_try=last_try)
    except TargetError as exc:
        raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from None
