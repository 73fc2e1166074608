"""Playing a challenge: one prompt in, the target's reply judged and recorded."""

import dataclasses
import logging
import math
import time
from dataclasses import dataclass
from datetime import UTC

import psycopg
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import F
from django.utils import timezone

from challenges.models import PROMPT_MAX_CHARS, Challenge, ChallengeAttempt, Secret
from challenges.selectors.leaderboards import leaderboard_rank
from challenges.selectors.levels import level_locked_reason
from challenges.services.attempts import attempt_record
from challenges.services.budgets import (
    Meter,
    budget_hold,
    budget_release,
)
from challenges.services.defences import (
    DefenceFired,
    input_defence_fired,
    output_defences_check_async,
)
from challenges.services.evaluation import (
    attempt_custom_score_async,
    challenge_evaluate_async,
)
from challenges.services.recording import Outcome, attempt_record_async
from challenges.services.secrets import fill_secret, secret_value_for
from challenges.targets import Target, roster, target_pick
from core.aio_clients import postgres_in_use
from core.disguises import normalise, secret_shows_in
from core.errors import ApplicationError
from core.fastlane import lane_counts
from core.ratelimit import (
    InFlightClaim,
    in_flight_claim,
    in_flight_release,
    parse_rate,
    rate_limit_hit,
)
from core.redaction import redact_secrets
from core.threads import run_orm
from judging.targets import (
    TargetConfig,
    TargetError,
    TargetReply,
    complete_async,
    rough_token_count,
)
from judging.verdicts import Verdict
from players.models import EndUser
from players.services import end_user_for_account

logger = logging.getLogger(__name__)

# Attempts one player may have waiting on a model at once (web API and page together).
IN_FLIGHT_ATTEMPTS_PER_PLAYER = 2
TARGET_FAILED_MESSAGE = (
    "The target model did not answer. Nothing was recorded; please try again in a moment."
)


@dataclass(frozen=True)
class PlayResult:
    attempt: ChallengeAttempt
    response: str
    # None while the attempt is under review (SPEC §10).
    challenge_succeeded: bool | None
    judge_rating: int | None
    judge_feedback: str
    score: float | None
    leaderboard_rank: int | None
    defence: DefenceFired | None = None

    @property
    def attempt_id(self):
        return self.attempt.id

    @property
    def proof_id(self):
        return self.attempt.proof_id

    @property
    def codename(self) -> str:
        return self.attempt.codename

    @property
    def verdict_status(self) -> str:
        return self.attempt.verdict_status


def challenge_closed_reason(*, challenge: Challenge) -> str | None:
    if challenge.is_open():
        return None
    now = timezone.now()
    starts, ends = challenge.play_window(now)
    wave = challenge.current_wave(now)
    if challenge.is_active and starts and now < starts:
        if wave is not None and starts == wave.opens_at:
            opens = wave.opens_at.astimezone(UTC)
            return (
                f"This challenge opens with the wave “{wave.name}” on {opens:%Y-%m-%d %H:%M} UTC."
            )
        return "This challenge has not started yet."
    if challenge.is_active and ends and now >= ends:
        if wave is not None and ends == wave.closes_at:
            return f"The wave “{wave.name}” has closed; new attempts are no longer accepted."
        return "This challenge has ended; new attempts are no longer accepted."
    return "This challenge is closed."


def target_config_for(*, challenge: Challenge, target: Target | None = None) -> TargetConfig:
    """The provider settings of a challenge's target (its own, or `target` of its several),
    with any key it names resolved server-side."""
    target = target or roster(challenge)[0]
    options = dict(target.target_config or {})
    common = {
        "provider": target.target,
        "timeout_seconds": settings.TARGET_TIMEOUT_SECONDS,
        "max_retries": settings.TARGET_MAX_RETRIES,
        "options": options,
    }
    if target.target == Challenge.Target.OPENAI:
        return TargetConfig(
            model=target.target_model,
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            **common,
        )
    if target.target == Challenge.Target.DIFY:
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


def _refuse_nul(text: str, *, field: str) -> None:
    # PostgreSQL stores no NUL in text; a form post (unlike a JSON body) can carry one.
    if "\x00" in text:
        message = "Text may not contain NUL characters."
        raise ApplicationError(message, fields={field: [message]})


def _check_playable(*, challenge: Challenge, prompt: str) -> None:
    if not prompt or not prompt.strip():
        raise ApplicationError("Write a prompt first.", fields={"prompt": ["Required."]})
    _refuse_nul(prompt, field="prompt")
    if len(prompt) > PROMPT_MAX_CHARS:
        raise ApplicationError(
            f"A prompt is at most {PROMPT_MAX_CHARS} characters.",
            fields={"prompt": [f"At most {PROMPT_MAX_CHARS} characters."]},
        )
    closed = challenge_closed_reason(challenge=challenge)
    if closed:
        raise ApplicationError(closed, code="challenge_closed", status=409)


@dataclass(frozen=True)
class PlayPlan:
    """Everything the model call needs, read from the database before it starts."""

    challenge: Challenge
    end_user: EndUser
    secret: str | None
    system_prompt: str
    target_config: TargetConfig
    # How the attempt's use is priced and counted, and its budget hold (docs/budgets.md).
    meter: Meter | None = None
    # The codename of the target played (several targets), stored on the attempt.
    codename: str = ""
    # Planned inside a transaction (a caller's atomic block): recorded in it, on this
    # connection, since the recorder's own connection would not see its rows.
    in_transaction: bool = False


def _play_plan(
    *,
    challenge: Challenge,
    account: AbstractBaseUser,
    codename: str = "",
    target: Target | None = None,
) -> PlayPlan:
    """The plan of a play: a new one gets its target by the challenge's assignment rule
    (`codename`: the player's choice); a session's later turn passes the `target` it has."""
    end_user = end_user_for_account(workspace=challenge.workspace, account=account)
    locked = level_locked_reason(challenge=challenge, end_user=end_user)
    if locked:
        raise ApplicationError(locked, code="level_locked", status=403)
    if target is None:
        target = target_pick(challenge=challenge, end_user=end_user, codename=codename)
    secret = secret_value_for(challenge=challenge, end_user=end_user)
    return PlayPlan(
        challenge=challenge,
        end_user=end_user,
        secret=secret,
        system_prompt=fill_secret(challenge.system_prompt, secret),
        target_config=target_config_for(challenge=challenge, target=target),
        codename=target.codename,
        in_transaction=connection.in_atomic_block,
    )


def target_failed(*, challenge: Challenge, error: TargetError) -> ApplicationError:
    # The reason may name the endpoint; it is logged, the player gets a generic line.
    logger.warning("Target failed for challenge %s: %s", challenge.id, error)
    return ApplicationError(TARGET_FAILED_MESSAGE, code="target_unavailable", status=502)


def play_record(
    *,
    plan: PlayPlan,
    prompt: str,
    reply: TargetReply,
    verdict: Verdict,
    custom_score: float | None,
    source: str,
    defence: DefenceFired | None = None,
    answer: str = "",
) -> PlayResult:
    """Record a finished play on the full path (`attempt_record`), in a transaction of its own."""
    try:
        attempt = attempt_record(
            **_attempt_fields(
                plan=plan,
                prompt=prompt,
                reply=reply,
                verdict=verdict,
                custom_score=custom_score,
                source=source,
                answer=answer,
            )
        )
    finally:
        # Settled with the attempt; a refused or repeated one leaves its hold to drop here.
        budget_release(plan.meter)
    return _play_result(plan=plan, attempt=attempt, reply=reply, defence=defence)


def _attempt_fields(
    *,
    plan: PlayPlan,
    prompt: str,
    reply: TargetReply,
    verdict: Verdict,
    custom_score: float | None,
    source: str,
    answer: str,
) -> dict:
    """What a finished play records, as `attempt_record` and `attempt_record_async` take it."""
    return {
        "challenge": plan.challenge,
        "end_user": plan.end_user,
        "verdict": verdict,
        "prompt": prompt,
        "response": reply.text,
        "tokens_total": reply.tokens_total,
        "elapsed_ms": reply.elapsed_ms,
        "source": source,
        "custom_score": custom_score,
        "disclosed_secret": _reply_disclosed(plan=plan, prompt=prompt, reply=reply),
        "own_text": (prompt or answer, reply.text),
        "codename": plan.codename,
        "cost": _cost(plan=plan, prompt=prompt, reply=reply),
        "meter": plan.meter,
    }


async def play_record_async(
    *,
    plan: PlayPlan,
    prompt: str,
    reply: TargetReply,
    verdict: Verdict,
    custom_score: float | None,
    source: str,
    defence: DefenceFired | None = None,
    answer: str = "",
) -> PlayResult:
    """Record a finished play through the recorder (challenges/services/recording.py): the
    attempt, the player's own copy of its text, its spend and its budget hold dropped, with
    the plays of other players that finish meanwhile, in one statement.

    A win or an attempt under review takes the full path (`play_record`): its proof, the
    copy check, the board's events and pushes, the review are written there; so does a play
    planned in a transaction, and one whose player the recorder finds changed (linked)."""
    record = {
        "plan": plan,
        "prompt": prompt,
        "reply": reply,
        "verdict": verdict,
        "custom_score": custom_score,
        "source": source,
        "defence": defence,
        "answer": answer,
    }
    if verdict.passed or verdict.under_review or plan.in_transaction or not postgres_in_use():
        return await run_orm(play_record, **record)
    try:
        outcome, attempt = await attempt_record_async(
            **_attempt_fields(
                plan=plan,
                prompt=prompt,
                reply=reply,
                verdict=verdict,
                custom_score=custom_score,
                source=source,
                answer=answer,
            ),
            secret=plan.secret,
        )
    except (psycopg.Error, ApplicationError):
        # Nothing of a statement that failed was written.
        logger.warning("Play: the recorder failed, the full path records", exc_info=True)
        outcome, attempt = Outcome.STALE, None
    lane_counts[f"play_recording:{outcome.value}"] += 1
    if outcome is not Outcome.RECORDED:
        return await run_orm(play_record, **record)
    return await run_orm(_play_result, plan=plan, attempt=attempt, reply=reply, defence=defence)


def _cost(*, plan: PlayPlan, prompt: str, reply: TargetReply):
    meter = plan.meter
    if meter is None:
        return None
    return meter.cost(tokens_total=reply.tokens_total, input_text=plan.system_prompt + prompt)


def _play_result(
    *, plan: PlayPlan, attempt: ChallengeAttempt, reply: TargetReply, defence: DefenceFired | None
) -> PlayResult:
    # SPEC §4c "the win is seen": only the player whose attempt drew the secret out gets
    # the reply as the model gave it; what is stored and shown to anyone else is masked.
    # In guess mode the player reads the secret out of their own reply and types it in.
    shown_as_given = attempt.succeeded or plan.challenge.answer_mode == Challenge.AnswerMode.GUESS
    response = reply.text if shown_as_given else redact_secrets(reply.text, [plan.secret])
    return PlayResult(
        attempt=attempt,
        response=response,
        defence=defence,
        challenge_succeeded=attempt.challenge_succeeded,
        judge_rating=attempt.judge_rating,
        judge_feedback=attempt.judge_feedback,
        score=attempt.score,
        leaderboard_rank=leaderboard_rank(challenge=plan.challenge, end_user=plan.end_user),
    )


def _reply_disclosed(*, plan: PlayPlan, prompt: str, reply: TargetReply) -> bool:
    """Whether a guess-mode reply showed the player a secret their prompt did not hold."""
    if plan.challenge.answer_mode != Challenge.AnswerMode.GUESS or not plan.secret:
        return False
    if secret_shows_in(prompt, plan.secret) is not None:
        return False
    return secret_shows_in(reply.text, plan.secret) is not None


def reply_with_wall_time(reply: TargetReply, *, started: float) -> TargetReply:
    """The reply with the wall time measured around the target call when the target
    reported none (or 0: the offline target answers in well under a millisecond)."""
    if reply.elapsed_ms:
        return reply
    elapsed_ms = max(math.ceil((time.perf_counter() - started) * 1000), 1)
    return dataclasses.replace(reply, elapsed_ms=elapsed_ms)


def in_flight_expiry_seconds() -> int:
    """Longer than any attempt can run: the target's and judge's timeouts with retries."""
    target = settings.TARGET_TIMEOUT_SECONDS * (settings.TARGET_MAX_RETRIES + 1)
    # A judge may be asked twice (structured output, then plain JSON), each with retries.
    judge = settings.JUDGE_TIMEOUT_SECONDS * (settings.JUDGE_MAX_RETRIES + 1) * 2
    plugins = settings.PLUGIN_TIMEOUT_SECONDS * 2
    return int(target + judge + plugins) + 30


def play_start(
    *,
    challenge: Challenge,
    account: AbstractBaseUser,
    prompt: str,
    ip: str,
    codename: str = "",
    target: Target | None = None,
) -> tuple[PlayPlan, InFlightClaim]:
    _check_playable(challenge=challenge, prompt=prompt)
    claim = in_flight_claim(
        scope="play",
        key=str(account.pk),
        limit=IN_FLIGHT_ATTEMPTS_PER_PLAYER,
        expiry_seconds=in_flight_expiry_seconds(),
    )
    try:
        _check_rate_limits(challenge=challenge, account=account, ip=ip)
        plan = _play_plan(challenge=challenge, account=account, codename=codename, target=target)
        return plan_metered(plan, prompt=prompt), claim
    except BaseException:
        in_flight_release(claim)
        raise


def plan_metered(plan: PlayPlan, *, prompt: str, history_text: str = "") -> PlayPlan:
    """The plan with its budget hold taken (402 `budget_spent` when a budget is spent and
    the creator set no fallback model) and the target that is then asked."""
    meter, config = budget_hold(
        challenge=plan.challenge,
        end_user=plan.end_user,
        input_text=plan.system_prompt + history_text + prompt,
        config=plan.target_config,
        expiry_seconds=in_flight_expiry_seconds(),
    )
    return dataclasses.replace(plan, meter=meter, target_config=config)


async def attempt_play_async(
    *,
    challenge: Challenge,
    account: AbstractBaseUser,
    prompt: str,
    ip: str,
    source: str = ChallengeAttempt.Source.WEB,
    codename: str = "",
) -> PlayResult:
    """Run the player's prompt against the challenge's target, judge it and record it
    (SPEC §4c): no thread and no database connection waits on the model.

    Nothing is written unless the target answered and the verdict is known, so a failed
    call leaves no half-made attempt behind.

    The ORM runs before and after the awaits, on the request's thread, which hands its
    connection back in between. A player has at most IN_FLIGHT_ATTEMPTS_PER_PLAYER
    attempts waiting at once; more get a 429.
    """
    plan, claim = await run_orm(
        play_start, challenge=challenge, account=account, prompt=prompt, ip=ip, codename=codename
    )
    custom_score, defence = None, None
    try:
        defence = input_defence_fired(defences=challenge.defences, prompt=prompt)
        if defence:
            reply, verdict = refused_reply(defence, reply=None, prompt=prompt)
        else:
            reply, verdict, defence, custom_score = await _ask_and_judge(plan=plan, prompt=prompt)
    except BaseException:
        await run_orm(budget_release, plan.meter)
        raise
    finally:
        await run_orm(in_flight_release, claim)
    return await play_record_async(
        plan=plan,
        prompt=prompt,
        reply=reply,
        verdict=verdict,
        custom_score=custom_score,
        source=source,
        defence=defence,
    )


async def _ask_and_judge(
    *, plan: PlayPlan, prompt: str
) -> tuple[TargetReply, Verdict, DefenceFired | None, float | None]:
    started = time.perf_counter()
    try:
        reply = await complete_async(
            system_prompt=plan.system_prompt,
            prompt=prompt,
            user=plan.end_user.external_id,
            config=plan.target_config,
        )
    except TargetError as exc:
        raise target_failed(challenge=plan.challenge, error=exc) from None
    return await reply_judge(
        plan=plan, prompt=prompt, reply=reply_with_wall_time(reply, started=started)
    )


async def reply_judge(
    *,
    plan: PlayPlan,
    prompt: str,
    reply: TargetReply,
    judged: tuple[str, str] | None = None,
) -> tuple[TargetReply, Verdict, DefenceFired | None, float | None]:
    """The output defences, then the evaluator and scorer, for a finished reply: (the reply
    as it is recorded, the verdict, the defence that fired if any, the custom score).

    `judged` (output, prompt), when given, is what the evaluator sees instead of the reply
    and the prompt: a conversation judged over its whole transcript (SPEC §9)."""
    challenge = plan.challenge
    check = await output_defences_check_async(
        defences=challenge.defences, reply=reply.text, secret=plan.secret
    )
    defence = check.fired
    if defence or challenge.answer_mode == Challenge.AnswerMode.GUESS:
        refused, verdict = refused_reply(defence, reply=reply)
        return refused, dataclasses.replace(verdict, check_usage=check.usage), defence, None
    output, judged_prompt = judged or (reply.text, prompt)
    verdict = await challenge_evaluate_async(
        challenge=challenge, secret=plan.secret, output=output, prompt=judged_prompt
    )
    # The reviewer's (llm_check) judge calls are the attempt's too.
    verdict = dataclasses.replace(verdict, check_usage=verdict.check_usage + check.usage)
    custom_score = await attempt_custom_score_async(
        challenge=challenge,
        verdict=verdict,
        tokens_total=reply.tokens_total,
        elapsed_ms=reply.elapsed_ms,
    )
    return reply, verdict, None, custom_score


GUESS_MODE_FEEDBACK = (
    "In this challenge the reply is not judged: when you have worked out the secret, type "
    "it into the answer box."
)


def refused_reply(
    defence: DefenceFired | None, *, reply: TargetReply | None, prompt: str = ""
) -> tuple[TargetReply, Verdict]:
    """A failed attempt: the layer's message stands in for the reply (SPEC §4c), or, in
    guess mode, the reply stands unjudged. A prompt the input filter refused (no reply)
    counts the tokens of its own text."""
    if defence is None:
        return reply, Verdict(passed=False, feedback=GUESS_MODE_FEEDBACK)
    feedback = f"A defence layer ({defence.kind}) caught {defence.caught}."
    if reply is None:
        reply = TargetReply(
            text=defence.message, tokens_total=rough_token_count(prompt), elapsed_ms=0
        )
    else:
        reply = TargetReply(
            text=defence.message, tokens_total=reply.tokens_total, elapsed_ms=reply.elapsed_ms
        )
    return reply, Verdict(passed=False, feedback=feedback)


GUESS_RIGHT_FEEDBACK = "That is the secret. Challenge solved!"
GUESS_WRONG_FEEDBACK = "That is not the secret. Keep working on the model."
ANSWER_MAX_CHARS = 500


def guess_matches(answer: str, secret: str | None) -> bool:
    """A guess against the secret, after NFKC + casefold + trim (SPEC §4c)."""
    if not secret:
        return False
    return normalise(answer.strip()) == normalise(secret.strip())


_BEST_DISCLOSURE_FIRST = {
    "fewest_tokens": (F("tokens_total").asc(nulls_last=True), "created_at"),
    "fastest": (F("elapsed_ms").asc(nulls_last=True), "created_at"),
}


def _disclosing_prompt(*, challenge: Challenge, end_user: EndUser) -> dict:
    """The tokens and time of the player's best prompt whose reply showed them the secret,
    or none of either when no reply did (the guess then ranks after every disclosed one)."""
    order = _BEST_DISCLOSURE_FIRST.get(challenge.scoring_strategy, ("-created_at",))
    found = (
        ChallengeAttempt.objects.filter(
            challenge=challenge, end_user=end_user, disclosed_secret=True
        )
        .order_by(*order)
        .values("tokens_total", "elapsed_ms")
        .first()
    )
    return found or {"tokens_total": None, "elapsed_ms": None}


def _guess_judged(
    *, challenge: Challenge, account: AbstractBaseUser, answer: str, ip: str
) -> tuple[PlayPlan, TargetReply, Verdict]:
    if challenge.answer_mode != Challenge.AnswerMode.GUESS:
        raise ApplicationError(
            "This challenge judges the model's reply; it has no answer box.",
            code="not_guess_mode",
            status=409,
        )
    if not (answer or "").strip():
        raise ApplicationError("Type your answer first.", fields={"answer": ["Required."]})
    _refuse_nul(answer, field="answer")
    closed = challenge_closed_reason(challenge=challenge)
    if closed:
        raise ApplicationError(closed, code="challenge_closed", status=409)
    _check_rate_limits(challenge=challenge, account=account, ip=ip)
    plan = _play_plan(challenge=challenge, account=account)
    disclosing = _disclosing_prompt(challenge=challenge, end_user=plan.end_user)
    right = guess_matches(answer, plan.secret)
    verdict = Verdict(
        passed=right, feedback=GUESS_RIGHT_FEEDBACK if right else GUESS_WRONG_FEEDBACK
    )
    reply = TargetReply(
        text="", tokens_total=disclosing["tokens_total"], elapsed_ms=disclosing["elapsed_ms"]
    )
    return plan, reply, verdict


async def attempt_guess_async(
    *,
    challenge: Challenge,
    account: AbstractBaseUser,
    answer: str,
    ip: str,
    source: str = ChallengeAttempt.Source.WEB,
) -> PlayResult:
    """A player's answer in `guess` mode (SPEC §4c), compared after NFKC + casefold + trim.

    A right guess is the successful attempt. It is ranked by the player's best prompt
    whose reply disclosed the secret to them (its tokens, its time); a right guess no
    reply of theirs disclosed solves the challenge but ranks after every disclosed one on
    `fewest_tokens` and `fastest`. A wrong guess is a failed attempt. Both count against
    the same rate limits as prompts.
    """
    plan, reply, verdict = await run_orm(
        _guess_judged, challenge=challenge, account=account, answer=answer, ip=ip
    )
    custom_score = await attempt_custom_score_async(
        challenge=challenge,
        verdict=verdict,
        tokens_total=reply.tokens_total,
        elapsed_ms=reply.elapsed_ms,
    )
    return await play_record_async(
        plan=plan,
        prompt="",
        reply=reply,
        verdict=verdict,
        custom_score=custom_score,
        source=source,
        answer=answer,
    )


# The halves `attempt_play_async` is made of, shared with the streamed play
# (challenges/services/play_stream.py), which checks, plans and records the same way.
