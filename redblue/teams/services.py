"""Writes for red/blue team challenges: the challenge, joining a side, submissions and
their pairings, and a judged pairing's points."""

import logging
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from celery import current_app
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from challenges.models import PROMPT_MAX_CHARS, Review
from core.errors import ApplicationError
from core.ratelimit import rate_limit_hit
from core.theme import theme_errors
from judging.category_judge import suite_errors
from judging.judge_config import judge_config_errors
from judging.judges import judge_panel_messages
from judging.plugins import SCORER_GROUP, plugin_find
from players.models import EndUser, Workspace
from redblue.models import (
    RedBlueChallenge,
    RegressionAttack,
    SelectionPolicy,
    Team,
    TeamMembership,
    TeamPairing,
    TeamStanding,
    TeamSubmission,
)
from redblue.teams.agent import (
    agent_submission_checked,
    benign_report,
    scenario_cleaned,
    scenario_errors,
)
from redblue.teams.evaluation import (
    PairingOutcome,
    TargetError,
    agent_pairing_evaluate,
    judge_output_raw,
    pairing_evaluate,
    suite_verdict_stored,
)
from redblue.teams.live import (
    board_push_on_commit,
    opponent_requested_on_commit,
    pairing_completed_on_commit,
)
from redblue.teams.pairing import opponent_choose, other_team
from redblue.teams.scoring import PairingPoints, pairing_points

logger = logging.getLogger(__name__)

# The task is named, not imported: its module imports this one.
PAIRING_JUDGE_TASK = "redblue.teams.tasks.pairing_judge_task"
REGRESSION_TASK = "redblue.teams.tasks.defense_regression_task"
# The newest breaks a new defence is run against (each one is a target and a judge call).
REGRESSION_SET_MAX = 50
BANNED_TERMS_MAX = 100
BANNED_TERM_MAX_CHARS = 100
# How many waiting submissions a new one of the other side pairs with at once.
WAITING_CLAIM_LIMIT = 20

RED_BLUE_FIELDS = (
    "app_id",
    "workflow_id",
    "name",
    "description",
    "judge_suite",
    "defense_selection_policy",
    "attack_selection_policy",
    "scoring_strategy",
    "scoring_plugin_id",
    "scoring_entrypoint",
    "scoring_config",
    "theme",
    "instructions_md",
    "is_active",
    "target",
    "target_model",
    "judge_config",
    "judge_panel",
    "time_penalty_per_second",
    "token_penalty_per_1k",
    "pair_cooldown_seconds",
    "banned_terms",
    "sample_defense",
    "max_submissions_per_hour",
    "transcripts_published",
    "agent",
)


# --- The challenge ------------------------------------------------------------------------


def red_blue_challenge_errors(challenge: RedBlueChallenge) -> dict[str, list[str]]:
    """Every problem with a challenge's settings, keyed by field (the admin shows them too)."""
    errors: dict[str, list[str]] = {}

    def add(field: str, messages: list[str] | str) -> None:
        if messages:
            errors.setdefault(field, []).extend(
                [messages] if isinstance(messages, str) else messages
            )

    if not (challenge.name or "").strip():
        add("name", "Give the challenge a name.")
    add("judge_suite", suite_errors(challenge.judge_suite))
    add("theme", theme_errors(challenge.theme))
    add(
        "judge_config",
        [m for ms in judge_config_errors(challenge.judge_config).values() for m in ms],
    )
    add("judge_panel", judge_panel_messages(challenge.judge_panel))
    for field in ("defense_selection_policy", "attack_selection_policy"):
        if getattr(challenge, field) not in SelectionPolicy.values:
            add(field, "Use one of: " + ", ".join(SelectionPolicy.values) + ".")
    if challenge.target not in RedBlueChallenge.Target.values:
        add("target", "Use offline or openai.")
    if challenge.target == RedBlueChallenge.Target.OPENAI and not challenge.target_model:
        add("target_model", "Name the model the 'openai' target runs.")
    terms = challenge.banned_terms
    if not isinstance(terms, list) or len(terms) > BANNED_TERMS_MAX:
        add("banned_terms", f"Banned terms are a list of at most {BANNED_TERMS_MAX} words.")
    elif any(
        not isinstance(term, str) or not term.strip() or len(term) > BANNED_TERM_MAX_CHARS
        for term in terms
    ):
        add("banned_terms", f"Each banned term is text of 1–{BANNED_TERM_MAX_CHARS} characters.")
    if challenge.scoring_strategy == RedBlueChallenge.Strategy.CUSTOM:
        found = plugin_find(
            SCORER_GROUP,
            plugin_id=challenge.scoring_plugin_id,
            entrypoint=challenge.scoring_entrypoint,
        )
        if found is None:
            add(
                "scoring_plugin_id",
                "Custom scoring needs an installed scorer plugin (scoring_plugin_id or "
                "scoring_entrypoint of the prompt_challenges.scorers group).",
            )
    if not isinstance(challenge.scoring_config, dict):
        add("scoring_config", "The scoring config must be an object.")
    if challenge.scoring_strategy not in RedBlueChallenge.Strategy.values:
        add("scoring_strategy", "Use red_blue_ratio or custom.")
    add("agent", scenario_errors(challenge.agent))
    if (
        challenge.agent is not None
        and challenge.scoring_strategy == RedBlueChallenge.Strategy.CUSTOM
    ):
        add("scoring_strategy", "An agent scenario is scored red_blue_ratio.")
    if challenge.transcripts_published and challenge.is_active:
        # A running challenge's attackers never read a defence (SPEC §4).
        add(
            "transcripts_published",
            "Transcripts are published only once the challenge has ended: close it "
            "(is_active false) first, and unpublish them before reopening it.",
        )
    return errors


def _validated(challenge: RedBlueChallenge) -> None:
    errors = red_blue_challenge_errors(challenge)
    if errors:
        raise ApplicationError(
            "Some fields are invalid: " + ", ".join(sorted(errors)) + ".", fields=errors
        )
    challenge.agent = scenario_cleaned(challenge.agent)


def _apply(challenge: RedBlueChallenge, changes: dict[str, Any]) -> None:
    unknown = set(changes) - set(RED_BLUE_FIELDS)
    if unknown:
        raise ApplicationError(
            "Unknown fields: " + ", ".join(sorted(unknown)) + ".",
            fields={name: ["Unknown field."] for name in unknown},
        )
    for name, value in changes.items():
        setattr(challenge, name, value)


def red_blue_challenge_create(
    *, workspace: Workspace, user: AbstractBaseUser | None, **fields: Any
) -> RedBlueChallenge:
    challenge = RedBlueChallenge(workspace=workspace, created_by=user, updated_by=user)
    _apply(challenge, fields)
    _validated(challenge)
    challenge.save()
    return challenge


def red_blue_challenge_update(
    *, challenge: RedBlueChallenge, user: AbstractBaseUser | None, **changes: Any
) -> RedBlueChallenge:
    _apply(challenge, changes)
    _validated(challenge)
    challenge.updated_by = user
    challenge.save()
    return challenge


def red_blue_challenge_delete(*, challenge: RedBlueChallenge) -> None:
    challenge.delete()


# --- Joining and submitting ---------------------------------------------------------------


def _team_checked(team: Any) -> str:
    if team not in Team.values:
        raise ApplicationError("'team' must be 'red' or 'blue'.", fields={"team": ["red or blue"]})
    return team


def team_join(*, challenge: RedBlueChallenge, end_user: EndUser, team: str) -> TeamMembership:
    """Put the player on `team`; a player plays one side of a challenge for good."""
    team = _team_checked(team)
    if end_user.workspace_id != challenge.workspace_id:
        raise ApplicationError("The player does not belong to this challenge's workspace.")
    if not challenge.is_active:
        raise ApplicationError("This challenge is closed.", code="challenge_closed", status=409)
    try:
        with transaction.atomic():
            membership, _ = TeamMembership.objects.get_or_create(
                red_blue_challenge=challenge, end_user=end_user, defaults={"team": team}
            )
    except IntegrityError:
        membership = TeamMembership.objects.get(red_blue_challenge=challenge, end_user=end_user)
    if membership.team != team:
        raise ApplicationError(
            f"You are on the {membership.team} team of this challenge; a player keeps one side.",
            code="team_taken",
            status=409,
            fields={"team": [f"Already on {membership.team}."]},
        )
    return membership


def _normalised(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def banned_term_in(*, challenge: RedBlueChallenge, prompt: str) -> str | None:
    text = _normalised(prompt)
    for term in challenge.banned_terms or []:
        if isinstance(term, str) and term.strip() and _normalised(term.strip()) in text:
            return term.strip()
    return None


def prompt_check(*, challenge: RedBlueChallenge, prompt: Any, team: str) -> str:
    """The prompt as sent, or a 400 naming what is wrong with it."""
    what = "attack" if team == Team.RED else "defence"
    if not isinstance(prompt, str) or not prompt.strip():
        raise ApplicationError(f"Write your {what} first.", fields={"prompt": ["Required."]})
    if len(prompt) > PROMPT_MAX_CHARS:
        raise ApplicationError(
            f"A prompt is at most {PROMPT_MAX_CHARS} characters.",
            fields={"prompt": [f"At most {PROMPT_MAX_CHARS} characters."]},
        )
    banned = banned_term_in(challenge=challenge, prompt=prompt)
    if banned:
        message = f"Your {what} uses '{banned}', which this challenge does not allow. " + (
            "Rephrase it without that term."
        )
        raise ApplicationError(message, code="banned_term", fields={"prompt": [message]})
    return prompt


@dataclass(frozen=True)
class SubmitResult:
    submission: TeamSubmission
    pairings: list[TeamPairing]
    own_pairing: TeamPairing | None
    waiting: bool
    fell_back: bool
    # A defence held back until it withstands the regression set (status `checking`).
    checking: bool = False


def _pairing_create(
    *,
    challenge: RedBlueChallenge,
    attack: TeamSubmission,
    defense: TeamSubmission,
    triggered_by: str,
    enqueue: bool = True,
) -> TeamPairing:
    pairing = TeamPairing.objects.create(
        red_blue_challenge=challenge,
        workspace_id=challenge.workspace_id,
        attack_submission=attack,
        defense_submission=defense,
        triggered_by=triggered_by,
    )
    TeamSubmission.objects.filter(id__in=[attack.id, defense.id]).update(
        last_paired_at=pairing.created_at
    )
    if enqueue:
        task = current_app.signature(PAIRING_JUDGE_TASK, args=(str(pairing.id),))
        transaction.on_commit(task.delay)
    return pairing


def _sides(submission: TeamSubmission, opponent: TeamSubmission):
    if submission.team == Team.RED:
        return submission, opponent
    return opponent, submission


def _claim_waiting(*, challenge: RedBlueChallenge, submission: TeamSubmission) -> list:
    """Pair the other side's waiting submissions with this new one; each is claimed by
    one conditional UPDATE, so concurrent newcomers never both take it."""
    waiting = list(
        TeamSubmission.objects.filter(
            red_blue_challenge=challenge,
            team=other_team(submission.team),
            status=TeamSubmission.Status.WAITING,
        )
        .exclude(end_user_id=submission.end_user_id)
        .order_by("created_at")
        .values_list("id", flat=True)[:WAITING_CLAIM_LIMIT]
    )
    claimed = []
    for submission_id in waiting:
        taken = TeamSubmission.objects.filter(
            id=submission_id, status=TeamSubmission.Status.WAITING
        ).update(status=TeamSubmission.Status.PAIRED)
        if taken:
            claimed.append(TeamSubmission.objects.get(id=submission_id))
    return claimed


def submission_create(
    *,
    challenge: RedBlueChallenge,
    end_user: EndUser,
    team: str,
    prompt: str | None,
    source: str = TeamSubmission.Source.WEB,
    workflow_run_id: str = "",
    judge_own_pairing_here: bool = False,
    slots: Any = None,
    defences: Any = None,
) -> SubmitResult:
    """Save the submission and its pairings (pending); the judging runs after commit.

    The player's earlier submission on this side stops being active: a player has one
    current attack or defence. With `judge_own_pairing_here` (the bridge, which must
    answer with the verdict) the submission's own pairing, first in the result, is left
    for the caller to judge with `pairing_evaluate` and `pairing_complete`.
    """
    team = _team_checked(team)
    agent_fields: dict[str, Any] = {}
    if challenge.agent is not None:
        checked = agent_submission_checked(
            challenge=challenge, team=team, prompt=prompt, slots=slots, defences=defences
        )
        prompt = checked.prompt
        agent_fields = {"slots": checked.slots, "defences": checked.defences}
        if prompt.strip():
            prompt_check(challenge=challenge, prompt=prompt, team=team)
    else:
        for name, value in (("slots", slots), ("defences", defences)):
            if value is not None:
                raise ApplicationError(
                    f"'{name}' belongs to a red/blue challenge with an agent scenario.",
                    fields={name: ["This challenge takes a prompt."]},
                )
        prompt = prompt_check(challenge=challenge, prompt=prompt, team=team)
    membership = team_join(challenge=challenge, end_user=end_user, team=team)
    rate_limit_hit(
        scope="redblue-submit",
        key=f"{challenge.id}:{end_user.id}",
        limit=challenge.max_submissions_per_hour,
        window_seconds=3600,
    )
    with transaction.atomic():
        # One submission of a player at a time: each reads what the one before wrote (the
        # cooldown's pairings, the active submission). The membership row exists before
        # the player's first submission, so it serialises that one too.
        list(TeamMembership.objects.select_for_update().filter(pk=membership.pk))
        if team == Team.BLUE and (
            challenge.agent is not None or regression_set_exists(challenge=challenge)
        ):
            # It counts only once no break of the set still breaks it (and, on an agent
            # scenario, once its benign tasks have run): until then the player's current
            # defence stays theirs, and nobody is paired with this one.
            submission = TeamSubmission.objects.create(
                red_blue_challenge=challenge,
                workspace_id=challenge.workspace_id,
                account_id=end_user.account_id,
                end_user=end_user,
                team=team,
                prompt=prompt,
                source=source,
                workflow_run_id=workflow_run_id,
                active=False,
                status=TeamSubmission.Status.CHECKING,
                **agent_fields,
            )
            task = current_app.signature(REGRESSION_TASK, args=(str(submission.id),))
            transaction.on_commit(task.delay)
            return SubmitResult(
                submission=submission,
                pairings=[],
                own_pairing=None,
                waiting=False,
                fell_back=False,
                checking=True,
            )
        TeamSubmission.objects.filter(
            red_blue_challenge=challenge, end_user=end_user, team=team, active=True
        ).update(active=False)
        submission = TeamSubmission.objects.create(
            red_blue_challenge=challenge,
            workspace_id=challenge.workspace_id,
            account_id=end_user.account_id,
            end_user=end_user,
            team=team,
            prompt=prompt,
            source=source,
            workflow_run_id=workflow_run_id,
            **agent_fields,
        )
        return _submission_pair(
            challenge=challenge,
            submission=submission,
            judge_own_pairing_here=judge_own_pairing_here,
        )


def _submission_pair(
    *, challenge: RedBlueChallenge, submission: TeamSubmission, judge_own_pairing_here: bool
) -> SubmitResult:
    """Pair a submission that counts (inside the caller's transaction): the other side's
    waiting ones, and the opponent its policy picks."""
    team = submission.team
    claimed = _claim_waiting(challenge=challenge, submission=submission)
    choice = opponent_choose(
        challenge=challenge,
        submission=submission,
        exclude_ids=tuple(other.id for other in claimed),
    )
    opponents = ([choice.opponent] if choice.opponent is not None else []) + claimed
    pairings = [
        _pairing_create(
            challenge=challenge,
            attack=attack,
            defense=defense,
            triggered_by=team,
            # The first is the submission's own pairing: the bridge judges it itself.
            enqueue=not (judge_own_pairing_here and index == 0),
        )
        for index, (attack, defense) in enumerate(_sides(submission, other) for other in opponents)
    ]
    if not pairings:
        submission.status = TeamSubmission.Status.WAITING
        submission.save(update_fields=["status"])
    if choice.requested_new and (choice.opponent is not None or not pairings):
        opponent_requested_on_commit(
            challenge_id=challenge.id, team=other_team(team), submission_id=submission.id
        )
    board_push_on_commit(
        challenge_id=challenge.id, pairing_ids=[pairing.id for pairing in pairings]
    )
    return SubmitResult(
        submission=submission,
        pairings=pairings,
        own_pairing=pairings[0] if pairings else None,
        waiting=not pairings,
        fell_back=choice.fell_back,
    )


# --- A judged pairing ---------------------------------------------------------------------


_STANDING_COLUMNS = (
    "red_blue_challenge_id",
    "end_user_id",
    "team",
    "points",
    "pairings",
    "updated_at",
)


def _standing_add(*, challenge_id: Any, end_user_id: Any, team: str, points: Decimal) -> None:
    """One INSERT … ON CONFLICT DO UPDATE adding to the player's standing: atomic in the
    database, so concurrent pairings never lose an increment."""
    table = TeamStanding._meta.db_table
    fields = {field.attname: field for field in TeamStanding._meta.concrete_fields}
    values = {
        "red_blue_challenge_id": challenge_id,
        "end_user_id": end_user_id,
        "team": team,
        "points": points,
        "pairings": 1,
        "updated_at": timezone.now(),
    }
    params = [
        fields[name].get_db_prep_value(values[name], connection, prepared=False)
        for name in _STANDING_COLUMNS
    ]
    columns = ", ".join(_STANDING_COLUMNS)
    placeholders = ", ".join(["%s"] * len(_STANDING_COLUMNS))
    # Only our own table and column names are interpolated; values go as parameters.
    sql = (
        f"INSERT INTO {table} AS standing ({columns}) VALUES ({placeholders}) "  # noqa: S608
        "ON CONFLICT (red_blue_challenge_id, end_user_id, team) DO UPDATE SET "
        "points = standing.points + excluded.points, "
        "pairings = standing.pairings + 1, updated_at = excluded.updated_at"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _points_apply(*, pairing: TeamPairing, points: PairingPoints, breached: list[str]) -> None:
    """Add a scored pairing's points to both submissions and both players' standings
    (single-statement increments), and a break to the regression set, in the caller's
    transaction."""
    attack, defense = pairing.attack_submission, pairing.defense_submission
    if breached:
        # A new break: the attack joins the challenge's regression set (once).
        RegressionAttack.objects.bulk_create(
            [
                RegressionAttack(
                    red_blue_challenge_id=pairing.red_blue_challenge_id,
                    attack_submission_id=attack.pk,
                    pairing_id=pairing.pk,
                    categories=breached,
                )
            ],
            ignore_conflicts=True,
        )
    for submission, earned, team in (
        (attack, points.red, Team.RED),
        (defense, points.blue, Team.BLUE),
    ):
        TeamSubmission.objects.filter(pk=submission.pk).update(
            points_total=F("points_total") + earned, pairings_count=F("pairings_count") + 1
        )
        if submission.end_user_id:
            _standing_add(
                challenge_id=pairing.red_blue_challenge_id,
                end_user_id=submission.end_user_id,
                team=team,
                points=earned,
            )


def pairing_complete(*, pairing: TeamPairing, outcome: PairingOutcome) -> bool:
    """Store the verdicts and points once; a repeat (a retried task) changes nothing.

    A verdict a judge panel disagreed on is stored unscored, `review`, with a review in
    the queue; the decision scores it (`pairing_review_decide`). Returns whether this call
    completed the pairing (or sent it to review).
    """
    verdict = outcome.verdict
    under_review = verdict.under_review
    points = outcome.points
    assert points is not None or under_review
    with transaction.atomic():
        completed = TeamPairing.objects.filter(
            pk=pairing.pk, status=TeamPairing.Status.PENDING
        ).update(
            status=TeamPairing.Status.REVIEW if under_review else TeamPairing.Status.COMPLETED,
            response=outcome.reply.text,
            categories=verdict.as_flags(),
            judge_output_raw=outcome.judge_output_raw(),
            judge_rating=verdict.rating,
            judge_feedback=verdict.feedback,
            red_points=points.red if points else 0,
            blue_points=points.blue if points else 0,
            tokens_total=outcome.reply.tokens_total,
            elapsed_ms=outcome.reply.elapsed_ms,
            trace=outcome.trace,
            completed_at=timezone.now(),
        )
        if not completed:
            return False
        if under_review:
            Review.objects.create(
                workspace_id=pairing.workspace_id, pairing_id=pairing.pk, kind=Review.Kind.PAIRING
            )
            # Shown as under review; `team_pairing_completed` waits for the decision.
            board_push_on_commit(
                challenge_id=pairing.red_blue_challenge_id, pairing_ids=[pairing.pk]
            )
            return True
        _points_apply(pairing=pairing, points=points, breached=verdict.breached)
        pairing_completed_on_commit(
            challenge_id=pairing.red_blue_challenge_id, pairing_id=pairing.pk
        )
    return True


def pairing_review_decide(*, review: Review, decision: str) -> tuple[str, str]:
    """A person decided a pairing's disputed categories: `pass` counts them breached (the
    attack got through), `fail` held. The pairing is scored now, once: only a pairing still
    under review moves to completed, in the decision's transaction (which holds the
    review's row)."""
    pairing = (
        TeamPairing.objects.select_for_update(of=("self",))
        .select_related("red_blue_challenge", "attack_submission", "defense_submission")
        .get(pk=review.pairing_id)
    )
    if pairing.status != TeamPairing.Status.REVIEW:
        raise ApplicationError(
            "This pairing is no longer under review.", code="already_decided", status=409
        )
    verdict = suite_verdict_stored(pairing.judge_output_raw).decided(
        breached=decision == Review.Decision.PASS
    )
    points = pairing_points(
        challenge=pairing.red_blue_challenge,
        verdict=verdict,
        attack=pairing.attack_submission.prompt,
        defense=pairing.defense_submission.prompt,
        tokens_total=pairing.tokens_total,
        elapsed_ms=pairing.elapsed_ms,
    )
    raw = {**pairing.judge_output_raw, **judge_output_raw(verdict, points=points)}
    # The stored per-judge verdicts and token counts stay as the judges gave them.
    raw["judge_tokens"] = pairing.judge_output_raw.get("judge_tokens")
    raw["decided"] = decision
    TeamPairing.objects.filter(pk=pairing.pk, status=TeamPairing.Status.REVIEW).update(
        status=TeamPairing.Status.COMPLETED,
        categories=verdict.as_flags(),
        judge_output_raw=raw,
        judge_rating=verdict.rating,
        judge_feedback=verdict.feedback,
        red_points=points.red,
        blue_points=points.blue,
    )
    _points_apply(pairing=pairing, points=points, breached=verdict.breached)
    pairing_completed_on_commit(challenge_id=pairing.red_blue_challenge_id, pairing_id=pairing.pk)
    return "under_review", "passed" if decision == Review.Decision.PASS else "failed"


def pairing_fail(*, pairing: TeamPairing, reason: str) -> bool:
    """The target never answered: record it; nobody scores."""
    with transaction.atomic():
        failed = TeamPairing.objects.filter(
            pk=pairing.pk, status=TeamPairing.Status.PENDING
        ).update(
            status=TeamPairing.Status.FAILED,
            judge_feedback="The target model did not answer; this pairing does not count.",
            judge_output_raw={"error": "target_unavailable", "reason": reason[:300]},
            completed_at=timezone.now(),
        )
        if failed:
            board_push_on_commit(
                challenge_id=pairing.red_blue_challenge_id, pairing_ids=[pairing.pk]
            )
    return bool(failed)


def pairing_for_judging(*, pairing_id: Any) -> TeamPairing | None:
    """The pending pairing with what judging needs loaded, or None when already done."""
    return (
        TeamPairing.objects.filter(pk=pairing_id, status=TeamPairing.Status.PENDING)
        .select_related("red_blue_challenge", "attack_submission", "defense_submission")
        .first()
    )


def pairing_judge(*, pairing_id: Any, last_try: bool = True) -> str:
    """Run and store a pending pairing (the Celery task's body).

    A target that does not answer raises TargetError for a retry, and on the last try
    the pairing is recorded as failed. Returns what became of the pairing.
    """
    pairing = pairing_for_judging(pairing_id=pairing_id)
    if pairing is None:
        return "already_done"
    challenge = pairing.red_blue_challenge
    attack, defense = pairing.attack_submission, pairing.defense_submission
    try:
        if challenge.agent is not None:
            outcome = agent_pairing_evaluate(
                challenge=challenge,
                slots=attack.slots or {},
                attack=attack.prompt,
                defense=defense.prompt,
                defences=defense.defences or [],
                benign=defense.benign_report,
                user=str(attack.end_user_id or ""),
            )
        else:
            outcome = pairing_evaluate(
                challenge=challenge,
                attack=attack.prompt,
                defense=defense.prompt,
                user=str(attack.end_user_id or ""),
            )
    except TargetError as exc:
        logger.warning("Red/blue target failed for pairing %s: %s", pairing.pk, exc)
        if not last_try:
            raise
        pairing_fail(pairing=pairing, reason=str(exc))
        return "failed"
    return "completed" if pairing_complete(pairing=pairing, outcome=outcome) else "already_done"


# --- The regression set -------------------------------------------------------------------


def regression_set_exists(*, challenge: RedBlueChallenge) -> bool:
    return RegressionAttack.objects.filter(red_blue_challenge=challenge).exists()


@dataclass(frozen=True)
class RegressionCase:
    attack_submission_id: Any
    prompt: str
    end_user_id: Any
    slots: dict | None = None


def regression_cases(*, challenge: RedBlueChallenge) -> list[RegressionCase]:
    """The attacks a new defence must withstand: the newest REGRESSION_SET_MAX breaks."""
    rows = (
        RegressionAttack.objects.filter(red_blue_challenge=challenge)
        .order_by("-created_at")
        .values_list(
            "attack_submission_id",
            "attack_submission__prompt",
            "attack_submission__end_user_id",
            "attack_submission__slots",
        )[:REGRESSION_SET_MAX]
    )
    return [RegressionCase(*row) for row in reversed(rows)]


def defense_regression_settle(
    *, submission_id: Any, report: dict[str, Any] | None, benign: dict[str, Any] | None = None
) -> str:
    """Store a checked defence's report once; a defence that withstood every attack then
    counts: it becomes the player's current defence and is paired as any new one is.
    Returns `rejected`, `passed` or `already_done` (a retried task changes nothing)."""
    submission = (
        TeamSubmission.objects.filter(pk=submission_id).select_related("red_blue_challenge").first()
    )
    if submission is None:
        return "already_done"
    challenge = submission.red_blue_challenge
    rejected = bool(report) and (bool(report.get("failures")) or bool(report.get("error")))
    with transaction.atomic():
        list(
            TeamMembership.objects.select_for_update().filter(
                red_blue_challenge=challenge, end_user_id=submission.end_user_id
            )
        )
        settled = TeamSubmission.objects.filter(
            pk=submission.pk, status=TeamSubmission.Status.CHECKING
        ).update(
            status=TeamSubmission.Status.REJECTED if rejected else TeamSubmission.Status.PAIRED,
            regression_report=report,
            benign_report=benign,
        )
        if not settled:
            return "already_done"
        if rejected:
            return "rejected"
        newer = TeamSubmission.objects.filter(
            red_blue_challenge=challenge,
            end_user_id=submission.end_user_id,
            team=Team.BLUE,
            created_at__gt=submission.created_at,
        ).exclude(status=TeamSubmission.Status.REJECTED)
        if newer.exists():
            # The player sent another defence meanwhile: that one is their current one.
            TeamSubmission.objects.filter(pk=submission.pk).update(
                regression_report={**(report or {}), "superseded": True}
            )
            return "passed"
        TeamSubmission.objects.filter(
            red_blue_challenge=challenge,
            end_user_id=submission.end_user_id,
            team=Team.BLUE,
            active=True,
        ).update(active=False)
        TeamSubmission.objects.filter(pk=submission.pk).update(active=True)
        submission.refresh_from_db()
        _submission_pair(challenge=challenge, submission=submission, judge_own_pairing_here=False)
    return "passed"


def defense_regression_run(*, submission_id: Any, last_try: bool = True) -> str:
    """Run a defence waiting in `checking` against the regression set (the Celery task's
    body): the target and the judge suite per attack, with no transaction open, then one
    settling write. A target that does not answer raises TargetError for a retry; on the
    last try the defence is rejected with the reason (the player may send it again)."""
    submission = (
        TeamSubmission.objects.filter(pk=submission_id, status=TeamSubmission.Status.CHECKING)
        .select_related("red_blue_challenge")
        .first()
    )
    if submission is None:
        return "already_done"
    challenge = submission.red_blue_challenge
    cases = regression_cases(challenge=challenge)
    failures = []
    benign = None
    try:
        if challenge.agent is not None:
            # Once per defence, before it counts; pairings read it from the submission.
            benign = benign_report(
                challenge=challenge,
                system_prompt=submission.prompt,
                defences=submission.defences or [],
                user=str(submission.end_user_id or ""),
            )
        for case in cases:
            if challenge.agent is not None:
                outcome = agent_pairing_evaluate(
                    challenge=challenge,
                    slots=case.slots or {},
                    attack=case.prompt,
                    defense=submission.prompt,
                    defences=submission.defences or [],
                    benign=None,
                    user=str(case.end_user_id or ""),
                    scored=False,
                )
            else:
                outcome = pairing_evaluate(
                    challenge=challenge,
                    attack=case.prompt,
                    defense=submission.prompt,
                    user=str(case.end_user_id or ""),
                    scored=False,
                )
            if outcome.verdict.breached:
                failure = {
                    "attack_submission_id": str(case.attack_submission_id),
                    "prompt": case.prompt,
                    "categories": outcome.verdict.breached,
                    "judge_rating": outcome.verdict.rating,
                    "response": outcome.reply.text,
                }
                if outcome.trace is not None:
                    failure["slots"] = case.slots or {}
                    failure["trace"] = outcome.trace
                failures.append(failure)
    except TargetError as exc:
        logger.warning("Red/blue target failed checking defence %s: %s", submission.pk, exc)
        if not last_try:
            raise
        report = {
            "checked": len(cases),
            "passed": False,
            "failures": failures,
            "error": "target_unavailable",
        }
        return defense_regression_settle(submission_id=submission.pk, report=report, benign=benign)
    # An agent defence checked only for its benign tasks (no breaks yet) has no report.
    report = (
        {"checked": len(cases), "passed": not failures, "failures": failures} if cases else None
    )
    return defense_regression_settle(submission_id=submission.pk, report=report, benign=benign)


@dataclass(frozen=True)
class SelfTest:
    attack: str
    defense: str
    against: str  # "own_defense" | "sample_defense" | "draft_defense"


def self_test_prepare(
    *, challenge: RedBlueChallenge, end_user: EndUser, prompt: str, defense: str = ""
) -> SelfTest:
    """What a player's self-test runs: Blue fires an attack at their own (or a draft)
    defence, Red tries an attack on the creator's sample defence. Nothing is stored."""
    team = (
        TeamMembership.objects.filter(red_blue_challenge=challenge, end_user=end_user)
        .values_list("team", flat=True)
        .first()
    )
    if team is None:
        raise ApplicationError("Join a side before testing.", code="not_joined", status=409)
    if challenge.agent is not None:
        raise ApplicationError(
            "Self-tests run text attacks; this challenge is an agent scenario.",
            code="wrong_mode",
            status=409,
        )
    attack = prompt_check(challenge=challenge, prompt=prompt, team=Team.RED)
    rate_limit_hit(
        scope="redblue-selftest",
        key=f"{challenge.id}:{end_user.id}",
        limit=challenge.max_submissions_per_hour * 2,
        window_seconds=3600,
    )
    if team == Team.RED:
        if not challenge.sample_defense.strip():
            raise ApplicationError(
                "This challenge has no sample defence to test attacks against.",
                code="no_sample_defense",
                status=409,
            )
        return SelfTest(attack=attack, defense=challenge.sample_defense, against="sample_defense")
    if defense and defense.strip():
        draft = prompt_check(challenge=challenge, prompt=defense, team=Team.BLUE)
        return SelfTest(attack=attack, defense=draft, against="draft_defense")
    own = (
        TeamSubmission.objects.filter(
            red_blue_challenge=challenge, end_user=end_user, team=Team.BLUE, active=True
        )
        .values_list("prompt", flat=True)
        .first()
    )
    if own is None:
        raise ApplicationError(
            "Submit a defence first, or send the draft defence to test as 'defense'.",
            code="no_defense",
            status=409,
        )
    return SelfTest(attack=attack, defense=own, against="own_defense")
