"""Playing with the reply streamed as the model writes it (SPEC §4c "Streaming").

The same checks, plan and record as `attempt_play_async` (challenges/services/play.py): the checks
and the in-flight claim run before the first byte, so refusals are plain HTTP errors; the
attempt is judged and recorded once the model has finished. No database connection is
held while the model writes.

Chunks go only to the player who made the attempt, and even to them masked: a defence
layer (an output guard) may yet refuse the finished reply, so the secret must not slip out
while it is being written. The final result says what the player may see of the reply.
"""

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser

from challenges.models import Challenge, ChallengeAttempt
from challenges.services.budgets import budget_release
from challenges.services.defences import input_defence_fired
from challenges.services.play import (
    IN_FLIGHT_ATTEMPTS_PER_PLAYER,
    PlayPlan,
    PlayResult,
    in_flight_expiry_seconds,
    play_record_async,
    play_start,
    refused_reply,
    reply_judge,
    reply_with_wall_time,
    target_failed,
)
from core.disguises import base64_run_growing
from core.ratelimit import InFlightClaim, in_flight_claim, in_flight_release
from core.redaction import redact_secrets
from core.threads import run_orm
from judging.targets import History, TargetError, TargetReply, complete_stream_async


@dataclass(frozen=True)
class StartedPlay:
    """An attempt that passed its checks and holds an in-flight place."""

    challenge: Challenge
    plan: PlayPlan
    account_key: str
    prompt: str
    source: str


async def attempt_play_stream_start(
    *,
    challenge: Challenge,
    account: AbstractBaseUser,
    prompt: str,
    ip: str,
    source: str = ChallengeAttempt.Source.WEB,
    codename: str = "",
) -> StartedPlay:
    """Every check of a play (prompt, window, rate limits, in-flight cap) before streaming;
    raises ApplicationError like `attempt_play_async`.

    The in-flight place is given back at once and taken again when the stream is read: a
    response nobody reads (a client gone before the first byte) then holds nothing.
    """

    def start() -> PlayPlan:
        plan, claim = play_start(
            challenge=challenge, account=account, prompt=prompt, ip=ip, codename=codename
        )
        in_flight_release(claim)
        return plan

    plan = await run_orm(start)
    return StartedPlay(
        challenge=challenge,
        plan=plan,
        account_key=str(account.pk),
        prompt=prompt,
        source=source,
    )


def play_claim(*, account_key: str) -> InFlightClaim:
    """One of the player's in-flight places, as `play_start` takes it."""
    return in_flight_claim(
        scope="play",
        key=account_key,
        limit=IN_FLIGHT_ATTEMPTS_PER_PLAYER,
        expiry_seconds=in_flight_expiry_seconds(),
    )


class MaskedText:
    """The reply written so far, masked, given out only where no secret can still be
    forming: the last few characters wait until more text (or the end) settles them, and
    so does a base64 run that may still grow (it is masked whole if it holds the secret)."""

    def __init__(self, secret: str | None) -> None:
        self.secret = secret
        self.text = ""
        self.sent = 0
        # Room for the secret spelled out (spaced, dashed) across chunks; a base64 run
        # waits whole until it ends.
        self.holdback = 4 * len(secret) + 8 if secret else 0

    def add(self, piece: str) -> str:
        self.text += piece
        growing = base64_run_growing(self.text) if self.secret else None
        settled = self.text if growing is None else self.text[:growing]
        masked = redact_secrets(settled, [self.secret])
        ready = max(len(masked) - self.holdback, self.sent)
        fresh, self.sent = masked[self.sent : ready], ready
        return fresh

    def rest(self) -> str:
        masked = redact_secrets(self.text, [self.secret])
        fresh, self.sent = masked[self.sent :], len(masked)
        return fresh


async def reply_stream_masked(
    *, plan: PlayPlan, prompt: str, history: History = ()
) -> AsyncIterator[str | TargetReply]:
    """Masked text chunks as the model writes, then the whole reply with its wall time.

    A target failure raises ApplicationError; the caller holds the in-flight place.
    """
    masked = MaskedText(plan.secret)
    reply: TargetReply | None = None
    begun = time.perf_counter()
    try:
        async for piece in complete_stream_async(
            system_prompt=plan.system_prompt,
            prompt=prompt,
            user=plan.end_user.external_id,
            config=plan.target_config,
            history=history,
        ):
            if isinstance(piece, TargetReply):
                reply = piece
                continue
            fresh = masked.add(piece)
            if fresh:
                yield fresh
    except TargetError as exc:
        raise target_failed(challenge=plan.challenge, error=exc) from None
    if reply is None:
        raise target_failed(challenge=plan.challenge, error=TargetError("The stream ended early."))
    fresh = masked.rest()
    if fresh:
        yield fresh
    yield reply_with_wall_time(reply, started=begun)


async def attempt_play_stream(*, started: StartedPlay) -> AsyncIterator[str | PlayResult]:
    """Masked text chunks as the model writes, then the recorded `PlayResult` last.

    A target failure raises ApplicationError (nothing recorded). If the reader goes away
    mid-stream, nothing is recorded and the in-flight place is given back.
    """
    plan, prompt = started.plan, started.prompt
    defence = input_defence_fired(defences=started.challenge.defences, prompt=prompt)
    if defence:
        # The input filter refuses before the model is asked, as on every other path.
        reply, verdict = refused_reply(defence, reply=None, prompt=prompt)
        yield await play_record_async(
            plan=plan,
            prompt=prompt,
            reply=reply,
            verdict=verdict,
            custom_score=None,
            source=started.source,
            defence=defence,
        )
        return
    reply: TargetReply | None = None
    try:
        claim = await run_orm(play_claim, account_key=started.account_key)
    except BaseException:
        await run_orm(budget_release, plan.meter)
        raise
    try:
        async for piece in reply_stream_masked(plan=plan, prompt=prompt):
            if isinstance(piece, TargetReply):
                reply = piece
            else:
                yield piece
        reply, verdict, defence, custom_score = await reply_judge(
            plan=plan, prompt=prompt, reply=reply
        )
    except BaseException:
        # A failed call or a reader gone: nothing is recorded, so nothing stays held.
        await run_orm(budget_release, plan.meter)
        raise
    finally:
        await run_orm(in_flight_release, claim)
    yield await play_record_async(
        plan=plan,
        prompt=prompt,
        reply=reply,
        verdict=verdict,
        custom_score=custom_score,
        source=started.source,
        defence=defence,
    )
