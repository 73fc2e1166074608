"""The raw lane for `POST /bridge/dify/challenge-evaluator`: the common call, fast.

It answers a Bearer-keyed, well-formed call for a stored rules challenge with the full
path's answer, status and headers: key and player rate limits (one Redis round trip),
stored-answer replay, the rules evaluator with the echo rule, masking, and the recorder
(challenges/services/recording.py: delivery and attempt in one SQL statement); a win that a
live board shows, or that writes an event, is recorded by the full path's
`evaluation_finish`. A win the statement records gets its signed proof the first time
anyone asks for it (`proof_for_id`): the attempt pins what the proof attests, so the call
does not wait for a signature.
Anything else is handed to Django unchanged — a signed call, an inline rule, an llm-judge
or plugin challenge, a level of an in-order collection, a challenge with prerequisites, a
challenge that checks wins for near-copies (`copy_policy`, SPEC §10), a player over the
hourly limit, a field the DRF serializer would reshape or refuse, a stale cache — so
errors and rare cases keep exactly one implementation.

Key, challenge and player are looked up once per process and kept; the recording
statement re-checks all of them, and a mismatch drops the cache and hands the call on.
PostgreSQL out of reach is a 503 with Retry-After, at once while it is known to be
(core/aio_clients.py); a failed write keeps the caches. Redis out of reach hands the
call to Django, whose path decides what a Redis outage means.
"""

import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import psycopg
from django.conf import settings
from django.db import DatabaseError, connections
from django.db.models import prefetch_related_objects
from redis.exceptions import RedisError

from challenges.bridge import recording, services
from challenges.bridge.auth import key_for_bearer
from challenges.bridge.limits import key_rate_limit, player_rate_limit
from challenges.bridge.payload import EvaluatorCall, evaluator_call_as_sent
from challenges.bridge.signatures import key_hash
from challenges.models import BridgeKey, Challenge, ChallengeAttempt, Secret
from challenges.modes import play_mode_for
from challenges.selectors.challenges import challenge_in_workspace_by_ref
from challenges.selectors.levels import is_leveled
from challenges.services.attempts import attempt_build
from challenges.services.budgets import Meter, challenge_budgeted, meter_unheld, spend_amounts
from challenges.services.evaluation import challenge_evaluate_async
from challenges.services.recording import (
    AttemptRecord,
    Delivery,
    Held,
    Outcome,
    record_in_one_statement,
    verdict_priced,
)
from challenges.services.secrets import player_secret
from challenges.targets import has_several_targets
from core.aio_clients import (
    postgres_in_use,
    postgres_known_down,
    postgres_outage_begins,
    postgres_refuse_while_down,
    postgres_unavailable,
    redis_client,
)
from core.errors import ApplicationError, error_body
from core.fastlane import LaneRequest, lane_counts, lane_read_body, lane_respond_json
from core.outages import postgres_connection_died, postgres_unreachable
from core.parsers import JsonBodyError, json_loads
from core.ratelimit import RateCount, rate_counts_undo_async, rate_limits_count_async
from core.redaction import redact_secrets
from core.threads import run_orm_apart
from players.models import EndUser
from players.services import end_user_for_external_id

logger = logging.getLogger(__name__)

_CACHE_SIZE = 50_000
# DRF's APIView names the allowed methods on every answer.
_ALLOW = ((b"allow", b"POST, OPTIONS"),)


@dataclass(frozen=True)
class _Challenge:
    challenge: Challenge
    secret: str | None
    secret_updated_at: Any
    # A level of an in-order collection or a challenge with prerequisites: Django's path
    # checks them (challenges.selectors.levels) before it records.
    leveled: bool
    # The challenge's kind of play lets the lane record its calls (challenges/modes/): a
    # conversation's turns belong to a session, which only Django's path keeps.
    lane_records: bool = True
    # A budget applies (docs/budgets.md): Django's path reserves and counts against it.
    budgeted: bool = False
    # What a call's use is priced at and counted with, as on Django's path (any player's:
    # the recorder counts each attempt on its own player's row).
    meter: Meter | None = None


@dataclass(frozen=True)
class _Player:
    identity_id: Any
    linked_to_id: Any
    end_user: EndUser


class _Bounded(OrderedDict):
    """A cache that forgets its oldest entries past _CACHE_SIZE."""

    def remember(self, key, value):
        self[key] = value
        if len(self) > _CACHE_SIZE:
            self.popitem(last=False)
        return value


_keys: _Bounded = _Bounded()
_challenges: _Bounded = _Bounded()
_players: _Bounded = _Bounded()


def lane_caches_clear() -> None:
    _keys.clear()
    _challenges.clear()
    _players.clear()


def lane_enabled() -> bool:
    return bool(settings.REDIS_URL) and postgres_in_use()


def call_parse(body: bytes) -> EvaluatorCall | None:
    """The call when the DRF serializer would take it exactly as sent, else None."""
    try:
        data = json_loads(body)
    except JsonBodyError:
        return None
    return evaluator_call_as_sent(data)


async def _orm(function, /, *args, **kwargs):
    """run_orm_apart for work safe to run twice, run once more when the connection Django's
    pool lent had died (a restart closes them all), after the pool checked its idle ones."""
    postgres_refuse_while_down()
    try:
        try:
            return await run_orm_apart(function, *args, **kwargs)
        except DatabaseError as error:
            if not postgres_connection_died(error):
                raise
        await run_orm_apart(_django_pool_check)
        return await run_orm_apart(function, *args, **kwargs)
    except DatabaseError as error:
        if postgres_unreachable(error):
            postgres_outage_begins()
        raise


def _django_pool_check() -> None:
    pool = connections["default"].pool
    if pool is not None:
        pool.check()


async def _key(raw: str) -> BridgeKey | None:
    hashed = key_hash(raw)
    if hashed in _keys:
        return _keys[hashed]
    key = await _orm(key_for_bearer, raw)
    return _keys.remember(hashed, key) if key is not None else None


def _challenge_load(*, workspace_id, ref: str) -> _Challenge | None:
    challenge = challenge_in_workspace_by_ref(workspace_id=workspace_id, ref=ref)
    if challenge is None:
        return None
    # Its waves, read now: `is_open()` runs in the event loop, where nothing may query.
    prefetch_related_objects([challenge], "waves")
    secret = (
        Secret.objects.filter(workspace_id=workspace_id, name=challenge.secret_ref)
        .values_list("value", "updated_at")
        .first()
    )
    return _Challenge(
        challenge=challenge,
        secret=secret[0] if secret else None,
        secret_updated_at=secret[1] if secret else None,
        leveled=is_leveled(challenge=challenge),
        # Several targets: Django's path records which one (challenges/targets.py).
        lane_records=play_mode_for(challenge).lane_records and not has_several_targets(challenge),
        budgeted=challenge_budgeted(challenge=challenge),
        meter=meter_unheld(challenge=challenge, end_user=None),
    )


async def _challenge(*, workspace_id, ref: str) -> _Challenge | None:
    cache_key = (workspace_id, ref)
    if cache_key in _challenges:
        return _challenges[cache_key]
    found = await _orm(_challenge_load, workspace_id=workspace_id, ref=ref)
    return _challenges.remember(cache_key, found) if found is not None else None


def _player_load(*, workspace, external_id: str) -> _Player:
    identity = end_user_for_external_id(workspace=workspace, external_id=external_id)
    linked = EndUser.objects.get(pk=identity.linked_to_id) if identity.linked_to_id else None
    return _Player(
        identity_id=identity.id, linked_to_id=identity.linked_to_id, end_user=linked or identity
    )


async def _player(*, workspace, external_id: str) -> _Player:
    cache_key = (workspace.id, external_id)
    if cache_key in _players:
        return _players[cache_key]
    row = await recording.player_row(workspace_id=workspace.id, external_id=external_id)
    if row is None:  # a new player: created as Django's path creates one
        found = await _orm(_player_load, workspace=workspace, external_id=external_id)
        return _players.remember(cache_key, found)
    identity_id, linked_to_id, player_id, player_external_id, account_id = row
    # Only what recording reads (id, workspace, external id, account); never saved.
    player = EndUser(
        id=player_id,
        workspace_id=workspace.id,
        external_id=player_external_id,
        account_id=account_id,
    )
    return _players.remember(
        cache_key, _Player(identity_id=identity_id, linked_to_id=linked_to_id, end_user=player)
    )


def _lane_takes(entry: _Challenge) -> bool:
    challenge = entry.challenge
    return (
        entry.lane_records
        and not entry.leveled
        and not entry.budgeted
        # The near-copy check runs where Django's path records a win (attempt_record); a
        # policy changed since this was cached changes `updated_at`, which the recording
        # statement re-checks.
        and challenge.copy_policy == Challenge.CopyPolicy.OFF
        and challenge.evaluator_type == Challenge.EvaluatorType.RULES
        # A judge panel (and its review queue) is judged on Django's path.
        and not challenge.judge_panel
        and challenge.scoring_strategy != "custom"
        and challenge.is_open()
    )


def _secret(entry: _Challenge, player: _Player) -> str | None:
    challenge = entry.challenge
    if challenge.secret_per_player:
        return player_secret(challenge=challenge, player_key=player.end_user.external_id)
    return entry.secret if challenge.secret_ref else None


async def challenge_evaluator_lane(request: LaneRequest, send) -> bool:
    """Answer the call and return True, or return False to hand it to Django."""
    if not lane_enabled():
        return False
    scheme, _, raw_key = request.header(b"authorization").partition(" ")
    if scheme.lower() != "bearer" or not raw_key.strip():
        return False
    if postgres_known_down():
        await _respond_error(request, send, postgres_unavailable())
        return True
    body = await lane_read_body(request, limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    call = call_parse(body) if body is not None else None
    if call is None:
        return False
    try:
        return await _served(request, send, raw_key=raw_key.strip(), call=call)
    except Exception as error:
        if not postgres_unreachable(error):
            raise
    # Nothing was recorded: the caller's retry (Dify's HTTP node retries) is recorded once.
    await _respond_error(request, send, postgres_unavailable())
    return True


async def _served(request: LaneRequest, send, *, raw_key: str, call: EvaluatorCall) -> bool:
    key = await _key(raw_key)
    if key is None:
        return False
    entry = await _challenge(workspace_id=key.workspace_id, ref=call.challenge_ref)
    if entry is None or not _lane_takes(entry):
        return False
    player = await _player(workspace=key.workspace, external_id=call.user)
    redis = redis_client()
    try:
        # The key's limit first: a call it refuses is not counted on the player's.
        counts = await rate_limits_count_async(
            redis,
            [
                key_rate_limit(key.pk),
                player_rate_limit(challenge=entry.challenge, end_user_id=player.end_user.id),
            ],
        )
    except (RedisError, OSError):
        return False  # Django's path meets the same Redis and says so
    try:
        counts[0].refuse_if_over()
        # Over the player's limit: Django's path refuses, or replays a delivered run.
        over = counts[-1].over
        answer = None if over else await _evaluate_and_record(key, entry, player, call)
    except ApplicationError as exc:
        await _respond_error(request, send, exc)
        return True
    except Exception:
        await _give_back(redis, counts)
        raise
    if answer is None:
        # Django's path answers and counts the call itself.
        await _give_back(redis, counts)
        return False
    if answer.replayed:
        # A repeat delivery costs the player nothing on Django's path either.
        await _give_back(redis, counts[1:])
    headers = [*_ALLOW]
    if answer.replayed:
        headers.append((b"idempotent-replayed", b"true"))
    await lane_respond_json(request, send, answer.body, headers=headers)
    return True


async def _give_back(redis, counts: list[RateCount]) -> None:
    try:
        await rate_counts_undo_async(redis, counts)
    except (RedisError, OSError):
        logger.warning("Bridge lane: Redis lost a count to give back", exc_info=True)


async def _respond_error(request: LaneRequest, send, exc: ApplicationError) -> None:
    headers = [(name.lower().encode(), value.encode()) for name, value in exc.headers.items()]
    await lane_respond_json(
        request,
        send,
        error_body(code=exc.code, message=exc.message, fields=exc.fields),
        status=exc.status,
        headers=[*_ALLOW, *headers],
    )


async def _evaluate_and_record(
    key: BridgeKey, entry: _Challenge, player: _Player, call: EvaluatorCall
) -> services.BridgeAnswer | None:
    challenge = entry.challenge
    secret = _secret(entry, player)
    hidden_names = list(challenge.mask_variables or []) + call.mask_variables
    hidden = services.masked_values(call.variables, hidden_names)
    verdict = await challenge_evaluate_async(
        challenge=challenge,
        secret=secret,
        output=call.output,
        prompt=call.prompt,
        variables=services.variables_masked(call.variables, hidden_names),
    )
    verdict, judge_use = await verdict_priced(verdict=verdict, workspace_id=key.workspace_id)
    meter = entry.meter
    # Dify already ran the model: its tokens count as spent, priced as Django's path does.
    cost = meter.cost(tokens_total=call.tokens_total, input_text=call.prompt)
    attempt, standing = attempt_build(
        challenge=challenge,
        end_user=player.end_user,
        verdict=verdict,
        prompt=redact_secrets(call.prompt, hidden),
        response=redact_secrets(call.output, hidden),
        tokens_total=call.tokens_total,
        elapsed_ms=call.elapsed_ms,
        source=ChallengeAttempt.Source.BRIDGE,
        idempotency_key=call.workflow_run_id,
        workflow_run_id=call.workflow_run_id,
        secret=secret,
        cost=cost,
        judge_use=judge_use,
    )
    body = {
        **services.answer_body(verdict=verdict, output=call.output, secret=secret, hidden=hidden),
        "attempt_id": str(attempt.id),
    }

    record = AttemptRecord(
        attempt=attempt,
        rank_value=standing.rank_value,
        held=Held(
            key_id=key.pk,
            challenge_updated_at=challenge.updated_at,
            workspace_updated_at=challenge.workspace.updated_at,
            secret_ref=challenge.secret_ref,
            secret_updated_at=entry.secret_updated_at,
            identity_id=player.identity_id,
            linked_to_id=player.linked_to_id,
            price_model=meter.model,
            price_updated_at=meter.price.updated_at if meter.price else None,
        ),
        delivery=Delivery(
            key_id=key.pk,
            endpoint=services.EVALUATOR,
            workflow_run_id=call.workflow_run_id,
            response=body,
        ),
        spend=spend_amounts(tokens=call.tokens_total, cost=cost, judge=judge_use),
    )
    try:
        outcome = await record_in_one_statement(record)
    except psycopg.Error as error:
        if postgres_unreachable(error):
            raise
        # A deadlock with a link being made: Django's path answers. What the lane holds
        # is checked again by the next statement, so the caches stay.
        logger.warning("Bridge lane: recording failed, Django's path answers", exc_info=True)
        return None
    lane_counts[f"bridge_recording:{outcome.value}"] += 1
    if outcome is Outcome.STALE:
        lane_caches_clear()
        return None
    if outcome is Outcome.REPLAYED:
        stored = await recording.stored_response(
            workspace_id=key.workspace_id,
            endpoint=services.EVALUATOR,
            workflow_run_id=call.workflow_run_id,
        )
        return services.BridgeAnswer(stored, replayed=True) if stored is not None else None
    if outcome is Outcome.BOARD_CHANGED:
        # Safe to run twice: a delivery already stored is replayed.
        return await _orm(
            services.evaluation_finish,
            plan=services.EvaluationPlan(
                challenge=challenge,
                end_user=player.end_user,
                secret=secret,
                hidden_names=hidden_names,
                hidden=hidden,
            ),
            key=key,
            workflow_run_id=call.workflow_run_id,
            output=call.output,
            prompt=call.prompt,
            tokens_total=call.tokens_total,
            elapsed_ms=call.elapsed_ms,
            verdict=verdict,
            custom_score=None,
        )
    services.bridge_call_log(
        key, services.EVALUATOR, call.workflow_run_id, verdict, recorded=True, challenge=challenge
    )
    return services.BridgeAnswer(body)
