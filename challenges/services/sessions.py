"""Conversation sessions (SPEC §9): opening one, recording its turns, closing it.

A turn is written under a lock on its session, so two turns sent at once get consecutive
indexes and a closed session takes no more. The winning turn records one ChallengeAttempt
carrying the tokens and wall time of the whole session: boards, first blood, events and
proofs treat it as any win.
"""

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from challenges.models import Challenge, ChallengeAttempt, PlaySession, SessionTurn
from challenges.selectors.leaderboards import leaderboard_rank
from challenges.selectors.sessions import session_turns_left
from challenges.services.attempts import attempt_record
from challenges.services.budgets import judge_use_priced, spend_settle
from core.errors import ApplicationError
from core.redaction import redact_secrets
from judging.targets import TargetReply
from judging.verdicts import Verdict
from players.models import EndUser

SESSION_CLOSED_MESSAGE = "This session is over. Start a new session to play again."


def session_closed_error() -> ApplicationError:
    return ApplicationError(SESSION_CLOSED_MESSAGE, code="session_closed", status=409)


def session_open(
    *,
    challenge: Challenge,
    end_user: EndUser,
    dify_conversation_id: str | None = None,
    codename: str = "",
) -> PlaySession:
    return PlaySession.objects.create(
        workspace_id=challenge.workspace_id,
        challenge=challenge,
        end_user=end_user,
        dify_conversation_id=dify_conversation_id or None,
        codename=codename,
    )


def session_for_dify_conversation(
    *, challenge: Challenge, end_user: EndUser, conversation_id: str
) -> PlaySession:
    """The session a Dify conversation names, opened by its first turn. A conversation
    belongs to one challenge and one player; another's is refused."""
    lookup = {"workspace_id": challenge.workspace_id, "dify_conversation_id": conversation_id}
    session = PlaySession.objects.filter(**lookup).first()
    if session is None:
        try:
            with transaction.atomic():
                session = session_open(
                    challenge=challenge, end_user=end_user, dify_conversation_id=conversation_id
                )
        except IntegrityError:
            # A first turn delivered twice at once: the other delivery opened it.
            session = PlaySession.objects.get(**lookup)
    if session.challenge_id != challenge.id or session.end_user_id != end_user.id:
        raise ApplicationError(
            "That conversation_id belongs to another challenge or player.",
            code="conversation_taken",
            status=409,
            fields={"conversation_id": ["Used by another challenge or player."]},
        )
    return session


@dataclass(frozen=True)
class TurnOutcome:
    turn: SessionTurn
    session: PlaySession
    attempt: ChallengeAttempt | None
    # The reply as this player may see it: as given when the turn won, masked otherwise.
    response: str
    turns_left: int
    leaderboard_rank: int | None

    @property
    def challenge_succeeded(self) -> bool | None:
        # None while a person reviews the turn's attempt (SPEC §10).
        if self.attempt is not None and self.attempt.under_review:
            return None
        return self.turn.succeeded

    @property
    def attempt_id(self):
        return self.attempt.id if self.attempt else None

    @property
    def proof_id(self):
        return self.attempt.proof_id if self.attempt else None


def turn_record(
    *,
    session_id,
    challenge: Challenge,
    end_user: EndUser,
    prompt: str,
    reply: TargetReply,
    verdict: Verdict,
    secret: str | None,
    source: str,
    custom_score: float | None = None,
    workflow_run_id: str = "",
    cost=None,
    meter=None,
) -> TurnOutcome:
    """Write the turn, and the win or the end of the session it brings, atomically.

    The turn that wins closes the session `won`; the turn that reaches `max_turns` or the
    session's token budget closes it `spent`; a closed session answers 409 session_closed.
    """
    verdict, judge_use = judge_use_priced(verdict=verdict, workspace_id=challenge.workspace_id)
    with transaction.atomic():
        session = PlaySession.objects.select_for_update().get(pk=session_id)
        if session.state != PlaySession.State.OPEN:
            raise session_closed_error()
        session.turns_count += 1
        session.tokens_total += reply.tokens_total or 0
        session.cost += cost or 0
        session.elapsed_ms += reply.elapsed_ms or 0
        turn = SessionTurn.objects.create(
            session=session,
            index=session.turns_count,
            prompt=redact_secrets(prompt, [secret]),
            response=redact_secrets(reply.text, [secret]),
            tokens_total=reply.tokens_total,
            cost=cost,
            elapsed_ms=reply.elapsed_ms,
            succeeded=verdict.passed,
            judge_rating=verdict.rating,
            judge_feedback=redact_secrets(verdict.feedback, [secret]),
            workflow_run_id=workflow_run_id,
        )
        attempt = None
        budget = challenge.session_token_budget
        if verdict.passed or verdict.under_review:
            # A disputed turn (a judge panel) goes to the review queue as an attempt; the
            # session stays open until a turn wins outright (docs/reviews.md).
            attempt = attempt_record(
                challenge=challenge,
                end_user=end_user,
                verdict=verdict,
                prompt=prompt,
                response=reply.text,
                tokens_total=session.tokens_total,
                cost=session.cost,
                elapsed_ms=session.elapsed_ms,
                source=source,
                custom_score=custom_score,
                idempotency_key=workflow_run_id or None,
                workflow_run_id=workflow_run_id,
                codename=session.codename,
            )
        if verdict.passed:
            session.state, session.attempt = PlaySession.State.WON, attempt
        elif session.turns_count >= challenge.max_turns or (
            budget is not None and session.tokens_total >= budget
        ):
            session.state = PlaySession.State.SPENT
        if session.state != PlaySession.State.OPEN:
            session.ended_at = timezone.now()
        session.save()
        if meter is not None:
            # The turn's own use (the win's attempt carries the session's, counted already).
            spend_settle(meter=meter, tokens=reply.tokens_total, cost=cost, judge=judge_use)
    return TurnOutcome(
        turn=turn,
        session=session,
        attempt=attempt,
        response=reply.text if verdict.passed else turn.response,
        turns_left=session_turns_left(session=session, challenge=challenge),
        leaderboard_rank=leaderboard_rank(challenge=challenge, end_user=end_user)
        if attempt
        else None,
    )
