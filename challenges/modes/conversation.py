"""`conversation`: a session of turns in which the model sees the whole history (SPEC §9).

Each turn takes the checks of an attempt (prompt, window, level, per-turn rate limits, the
in-flight cap: `play_start`), asks the model with the session's earlier turns, runs the
defences and the evaluator — on the turn's reply, or with `judge_scope: transcript` on the
whole session — and records it with `turn_record`. No thread or database connection waits
on the model or the judge.
"""

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import ClassVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from challenges.bridge.services import (
    EVALUATOR,
    BridgeAnswer,
    BridgeCall,
    EvaluationPlan,
    answer_body,
    bridge_attempt_evaluate_async,
    bridge_call_log,
    bridge_store,
    bridge_stored_answer,
    bridge_verdict_async,
)
from challenges.models import Challenge, PlaySession
from challenges.modes import PlayMode
from challenges.selectors.levels import level_locked_reason
from challenges.selectors.sessions import (
    session_history,
    session_latest,
    session_of_player,
    session_turns,
    session_turns_left,
)
from challenges.services.budgets import budget_release, meter_unheld
from challenges.services.defences import input_defence_fired
from challenges.services.play import (
    PlayPlan,
    challenge_closed_reason,
    play_start,
    refused_reply,
    reply_judge,
    reply_with_wall_time,
    target_failed,
)
from challenges.services.play_stream import play_claim, reply_stream_masked
from challenges.services.sessions import (
    TurnOutcome,
    session_closed_error,
    session_for_dify_conversation,
    session_open,
    turn_record,
)
from challenges.targets import target_named, target_pick
from core.errors import ApplicationError, NotFoundError
from core.ratelimit import in_flight_release, parse_rate, rate_limit_hit
from core.redaction import redact_secrets
from core.threads import run_orm
from judging.targets import History, TargetError, TargetReply, complete_async
from players.link_codes import end_user_for_recording
from players.models import EndUser
from players.services import end_user_for_account

NOT_ONE_PROMPT = (
    "This challenge is a conversation: open a session "
    "(POST /web/api/challenges/{id}/sessions) and send it turns."
)


class ConversationPlay(PlayMode):
    name = "conversation"
    lane_records = False
    play_template = "challenges/_play_conversation.html"
    admin_fields: ClassVar[tuple[str, ...]] = ("max_turns", "judge_scope", "session_token_budget")

    async def attempt_async(self, *, challenge, account, prompt, ip, source, codename=""):
        raise self.refused(NOT_ONE_PROMPT)

    async def attempt_stream_start(self, *, challenge, account, prompt, ip, source, codename=""):
        raise self.refused(NOT_ONE_PROMPT)

    def session_open(
        self, *, challenge: Challenge, account: AbstractBaseUser, ip: str, codename: str = ""
    ) -> PlaySession:
        closed = challenge_closed_reason(challenge=challenge)
        if closed:
            raise ApplicationError(closed, code="challenge_closed", status=409)
        end_user = end_user_for_account(workspace=challenge.workspace, account=account)
        locked = level_locked_reason(challenge=challenge, end_user=end_user)
        if locked:
            raise ApplicationError(locked, code="level_locked", status=403)
        # Opening costs no model call, but each is a row: the IP limit of plays holds.
        limit, window = parse_rate(settings.PLAY_IP_RATE_LIMIT)
        rate_limit_hit(scope="session-ip", key=ip or "unknown", limit=limit, window_seconds=window)
        # The session keeps the target it is given now for every turn.
        target = target_pick(challenge=challenge, end_user=end_user, codename=codename)
        return session_open(challenge=challenge, end_user=end_user, codename=target.codename)

    async def bridge_evaluate(self, *, call: BridgeCall, plan: EvaluationPlan) -> BridgeAnswer:
        if plan.end_user is None:
            # Judged without a player: nothing is recorded, so there is no session either.
            return await bridge_attempt_evaluate_async(call=call, plan=plan)
        if not call.conversation_id:
            message = "A conversation challenge records turns: send Dify's conversation_id."
            raise ApplicationError(message, fields={"conversation_id": ["Required."]})
        session, history = await run_orm(_bridge_session, call=call, plan=plan)
        judged = transcript_judged(
            challenge=plan.challenge, history=history, prompt=call.prompt, output=call.output
        )
        verdict = await bridge_verdict_async(call=call, plan=plan, judged=judged)
        return await run_orm(
            _bridge_turn_finish, call=call, plan=plan, session=session, verdict=verdict
        )

    def page_context(self, *, challenge: Challenge, end_user: EndUser | None) -> dict:
        session = session_latest(challenge=challenge, end_user=end_user)
        return {
            "play_session": session,
            "session_turns": session_turns(session=session) if session else [],
            "turns_left": session_turns_left(session=session, challenge=challenge)
            if session
            else challenge.max_turns,
        }


def transcript_judged(
    *, challenge: Challenge, history: History, prompt: str, output: str
) -> tuple[str, str] | None:
    """What the evaluator sees with `judge_scope: transcript`: (output, prompt), else None.

    A judge (or plugin) gets the turns as JSON, so the player's words stay data; a rule
    reads the replies one after the other. Earlier replies are as stored: masked."""
    if challenge.judge_scope != Challenge.JudgeScope.TRANSCRIPT:
        return None
    turns = [*history, (prompt, output)]
    prompts = "\n".join(said for said, _ in turns)
    if challenge.evaluator_type == Challenge.EvaluatorType.RULES:
        return "\n".join(heard for _, heard in turns), prompts
    transcript = [
        {"turn": n, "player": said, "model": heard} for n, (said, heard) in enumerate(turns, 1)
    ]
    return json.dumps(transcript, ensure_ascii=False, indent=1), prompts


# --- the web: a turn answered whole, or streamed ---------------------------------------------


@dataclass(frozen=True)
class TurnPlan:
    session_id: object
    plan: PlayPlan
    history: History
    prompt: str
    source: str
    account_key: str


def _turn_start(*, session_id, account, prompt: str, ip: str, source: str, hold: bool):
    session = session_of_player(session_id=session_id, account=account)
    if session is None:
        raise NotFoundError("No such session.")
    if session.state != PlaySession.State.OPEN:
        raise session_closed_error()
    plan, claim = play_start(
        challenge=session.challenge,
        account=account,
        prompt=prompt,
        ip=ip,
        target=target_named(session.challenge, session.codename),
    )
    if not hold:
        in_flight_release(claim)
        claim = None
    history = session_history(session=session)
    turn = TurnPlan(
        session_id=session.id,
        plan=plan,
        history=history,
        prompt=prompt,
        source=source,
        account_key=str(account.pk),
    )
    return turn, claim


def _record(turn: TurnPlan, *, reply: TargetReply, verdict, custom_score) -> TurnOutcome:
    meter = turn.plan.meter
    # The model reads the whole history again on every turn: it is this turn's input too.
    sent = turn.plan.system_prompt + "".join(a + b for a, b in turn.history) + turn.prompt
    try:
        return turn_record(
            session_id=turn.session_id,
            challenge=turn.plan.challenge,
            end_user=turn.plan.end_user,
            prompt=turn.prompt,
            reply=reply,
            verdict=verdict,
            secret=turn.plan.secret,
            source=turn.source,
            custom_score=custom_score,
            cost=meter.cost(tokens_total=reply.tokens_total, input_text=sent) if meter else None,
            meter=meter,
        )
    finally:
        budget_release(meter)


async def _judge(turn: TurnPlan, reply: TargetReply):
    judged = transcript_judged(
        challenge=turn.plan.challenge, history=turn.history, prompt=turn.prompt, output=reply.text
    )
    return await reply_judge(plan=turn.plan, prompt=turn.prompt, reply=reply, judged=judged)


async def turn_play_async(
    *, session_id, account: AbstractBaseUser, prompt: str, ip: str, source: str
) -> TurnOutcome:
    """One turn of the player's session: asked, judged and recorded."""
    turn, claim = await run_orm(
        _turn_start,
        session_id=session_id,
        account=account,
        prompt=prompt,
        ip=ip,
        source=source,
        hold=True,
    )
    plan, custom_score = turn.plan, None
    try:
        defence = input_defence_fired(defences=plan.challenge.defences, prompt=prompt)
        if defence:
            reply, verdict = refused_reply(defence, reply=None, prompt=prompt)
        else:
            started = time.perf_counter()
            try:
                reply = await complete_async(
                    system_prompt=plan.system_prompt,
                    prompt=prompt,
                    user=plan.end_user.external_id,
                    config=plan.target_config,
                    history=turn.history,
                )
            except TargetError as exc:
                raise target_failed(challenge=plan.challenge, error=exc) from None
            reply = reply_with_wall_time(reply, started=started)
            reply, verdict, _, custom_score = await _judge(turn, reply)
    except BaseException:
        await run_orm(budget_release, plan.meter)
        raise
    finally:
        await run_orm(in_flight_release, claim)
    return await run_orm(_record, turn, reply=reply, verdict=verdict, custom_score=custom_score)


async def turn_stream_start(
    *, session_id, account: AbstractBaseUser, prompt: str, ip: str, source: str
) -> TurnPlan:
    """Every check of a turn before streaming; the in-flight place is taken when read."""
    turn, _ = await run_orm(
        _turn_start,
        session_id=session_id,
        account=account,
        prompt=prompt,
        ip=ip,
        source=source,
        hold=False,
    )
    return turn


async def turn_stream(*, turn: TurnPlan) -> AsyncIterator[str | TurnOutcome]:
    """Masked chunks as the model writes, then the recorded `TurnOutcome`."""
    plan, prompt = turn.plan, turn.prompt
    defence = input_defence_fired(defences=plan.challenge.defences, prompt=prompt)
    if defence:
        reply, verdict = refused_reply(defence, reply=None, prompt=prompt)
        yield await run_orm(_record, turn, reply=reply, verdict=verdict, custom_score=None)
        return
    reply: TargetReply | None = None
    try:
        claim = await run_orm(play_claim, account_key=turn.account_key)
    except BaseException:
        await run_orm(budget_release, plan.meter)
        raise
    try:
        async for piece in reply_stream_masked(plan=plan, prompt=prompt, history=turn.history):
            if isinstance(piece, TargetReply):
                reply = piece
            else:
                yield piece
        reply, verdict, _, custom_score = await _judge(turn, reply)
    except BaseException:
        await run_orm(budget_release, plan.meter)
        raise
    finally:
        await run_orm(in_flight_release, claim)
    yield await run_orm(_record, turn, reply=reply, verdict=verdict, custom_score=custom_score)


# --- the bridge: a Dify chatflow's conversation, turn by turn --------------------------------


def _bridge_session(*, call: BridgeCall, plan: EvaluationPlan):
    session = session_for_dify_conversation(
        challenge=plan.challenge,
        end_user=plan.end_user,
        conversation_id=call.conversation_id,
    )
    if session.state != PlaySession.State.OPEN:
        raise session_closed_error()
    return session, session_history(session=session)


def _bridge_turn_finish(
    *, call: BridgeCall, plan: EvaluationPlan, session: PlaySession, verdict
) -> BridgeAnswer:
    body = answer_body(verdict=verdict, output=call.output, secret=plan.secret, hidden=plan.hidden)

    def record():
        end_user = end_user_for_recording(end_user=plan.end_user)
        # Dify already ran the model: its tokens count as spent, never refused (budgets.md).
        meter = meter_unheld(challenge=plan.challenge, end_user=end_user)
        outcome = turn_record(
            session_id=session.id,
            challenge=plan.challenge,
            end_user=end_user,
            meter=meter,
            cost=meter.cost(tokens_total=call.tokens_total, input_text=call.prompt),
            prompt=redact_secrets(call.prompt, plan.hidden),
            reply=TargetReply(
                text=redact_secrets(call.output, plan.hidden),
                tokens_total=call.tokens_total,
                elapsed_ms=call.elapsed_ms,
            ),
            verdict=verdict,
            secret=plan.secret,
            source="bridge",
            workflow_run_id=call.workflow_run_id,
        )
        extra = {
            "session_id": str(session.id),
            "turn_index": outcome.turn.index,
            "session_state": outcome.session.state,
            "turns_left": outcome.turns_left,
        }
        return outcome.attempt, extra

    try:
        answer = bridge_store(
            workspace_id=call.key.workspace_id,
            endpoint=EVALUATOR,
            workflow_run_id=call.workflow_run_id,
            body=body,
            record=record,
        )
    except ApplicationError:
        # The same run delivered twice at once may find the session closed by itself.
        stored = bridge_stored_answer(
            workspace_id=call.key.workspace_id,
            endpoint=EVALUATOR,
            workflow_run_id=call.workflow_run_id,
        )
        if stored is None:
            raise
        return BridgeAnswer(stored, replayed=True)
    bridge_call_log(
        call.key, EVALUATOR, call.workflow_run_id, verdict, recorded=True, challenge=plan.challenge
    )
    return answer
