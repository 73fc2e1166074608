"""Playing a challenge: one prompt in, the target's reply judged and recorded."""

import logging
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from challenges.models import Challenge, ChallengeAttempt, Secret
from challenges.selectors.leaderboards import leaderboard_rank
from challenges.services.attempts import attempt_record
from challenges.services.evaluation import attempt_custom_score, challenge_evaluate
from challenges.services.secrets import fill_secret, secret_value_for
from core.errors import ApplicationError
from core.ratelimit import parse_rate, rate_limit_hit
from core.redaction import redact_secrets
from judging.targets import TargetConfig, TargetError, complete
from players.services import end_user_for_account

logger = logging.getLogger(__name__)

PROMPT_MAX_CHARS = 4000
TARGET_FAILED_MESSAGE = (
    "The target model did not answer. Nothing was recorded; please try again in a moment."
)


@dataclass(frozen=True)
class PlayResult:
    attempt: ChallengeAttempt
    response: str
    challenge_succeeded: bool
    judge_rating: int | None
    judge_feedback: str
    score: float | None
    leaderboard_rank: int | None

    @property
    def attempt_id(self):
        return self.attempt.id


def challenge_closed_reason(*, challenge: Challenge) -> str | None:
    if challenge.is_open():
        return None
    now = timezone.now()
    if challenge.is_active and challenge.starts_at and now < challenge.starts_at:
        return "This challenge has not started yet."
    if challenge.is_active and challenge.ends_at and now >= challenge.ends_at:
        return "This challenge has ended; new attempts are no longer accepted."
    return "This challenge is closed."


def target_config_for(*, challenge: Challenge) -> TargetConfig:
    """The provider settings for a challenge, with any key it names resolved server-side."""
    options = dict(challenge.target_config or {})
    common = {
        "provider": challenge.target,
        "timeout_seconds": settings.TARGET_TIMEOUT_SECONDS,
        "max_retries": settings.TARGET_MAX_RETRIES,
        "options": options,
    }
    if challenge.target == Challenge.Target.OPENAI:
        return TargetConfig(
            model=challenge.target_model,
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            **common,
        )
    if challenge.target == Challenge.Target.DIFY:
        key_name = options.pop("app_key_secret", "")
        api_key = ""
        if key_name:
            api_key = (
                Secret.objects.filter(workspace_id=challenge.workspace_id, name=key_name)
                .values_list("value", flat=True)
                .first()
            ) or ""
        return TargetConfig(base_url=options.pop("base_url", ""), api_key=api_key, **common)
    return TargetConfig(**common)


def _check_rate_limits(*, challenge: Challenge, account: AbstractBaseUser, ip: str) -> None:
    limit, window = parse_rate(settings.PLAY_IP_RATE_LIMIT)
    rate_limit_hit(scope="play-ip", key=ip or "unknown", limit=limit, window_seconds=window)
    rate_limit_hit(
        scope="play-player",
        key=f"{challenge.id}:{account.pk}",
        limit=challenge.max_attempts_per_hour,
        window_seconds=3600,
    )


def attempt_play(
    *,
    challenge: Challenge,
    account: AbstractBaseUser,
    prompt: str,
    ip: str,
    source: str = ChallengeAttempt.Source.WEB,
) -> PlayResult:
    """Run the player's prompt against the challenge's target, judge it and record it.

    Nothing is written unless the target answered and the verdict is known, so a failed
    call leaves no half-made attempt behind.
    """
    if not prompt or not prompt.strip():
        raise ApplicationError("Write a prompt first.", fields={"prompt": ["Required."]})
    if len(prompt) > PROMPT_MAX_CHARS:
        raise ApplicationError(
            f"A prompt is at most {PROMPT_MAX_CHARS} characters.",
            fields={"prompt": [f"At most {PROMPT_MAX_CHARS} characters."]},
        )
    closed = challenge_closed_reason(challenge=challenge)
    if closed:
        raise ApplicationError(closed, code="challenge_closed", status=409)
    _check_rate_limits(challenge=challenge, account=account, ip=ip)

    end_user = end_user_for_account(workspace=challenge.workspace, account=account)
    secret = secret_value_for(challenge=challenge)
    system_prompt = fill_secret(challenge.system_prompt, secret)
    try:
        reply = complete(
            system_prompt=system_prompt,
            prompt=prompt,
            user=end_user.external_id,
            config=target_config_for(challenge=challenge),
        )
    except TargetError as exc:
        # The reason may name the endpoint; it is logged, the player gets a generic line.
        logger.warning("Target failed for challenge %s: %s", challenge.id, exc)
        raise ApplicationError(TARGET_FAILED_MESSAGE, code="target_unavailable", status=502)

    verdict = challenge_evaluate(challenge=challenge, output=reply.text, prompt=prompt)
    custom_score = attempt_custom_score(
        challenge=challenge,
        verdict=verdict,
        tokens_total=reply.tokens_total,
        elapsed_ms=reply.elapsed_ms,
    )
    attempt = attempt_record(
        challenge=challenge,
        end_user=end_user,
        verdict=verdict,
        prompt=prompt,
        response=reply.text,
        tokens_total=reply.tokens_total,
        elapsed_ms=reply.elapsed_ms,
        source=source,
        custom_score=custom_score,
    )
    return PlayResult(
        attempt=attempt,
        response=redact_secrets(reply.text, [secret]),
        challenge_succeeded=attempt.succeeded,
        judge_rating=attempt.judge_rating,
        judge_feedback=attempt.judge_feedback,
        score=attempt.score,
        leaderboard_rank=leaderboard_rank(challenge=challenge, end_user=end_user),
    )
