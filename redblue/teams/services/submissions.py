"""Writes for a player's side of a red/blue challenge: joining a team, submitting an
attack or a defence and pairing it with the other side's, and what a self-test runs."""

import unicodedata
from dataclasses import dataclass
from typing import Any

from celery import current_app
from django.db import IntegrityError, transaction

from challenges.models import PROMPT_MAX_CHARS
from core.errors import ApplicationError
from core.ratelimit import rate_limit_hit
from players.models import EndUser
from redblue.models import (
    RedBlueChallenge,
    Team,
    TeamMembership,
    TeamPairing,
    TeamSubmission,
)
from redblue.teams.agent import agent_submission_checked
from redblue.teams.live import board_push_on_commit, opponent_requested_on_commit
from redblue.teams.pairing import opponent_choose, other_team
from redblue.teams.selectors import regression_set_exists

# The tasks are named, not imported: their module imports this one.
PAIRING_JUDGE_TASK = "redblue.teams.tasks.pairing_judge_task"
REGRESSION_TASK = "redblue.teams.tasks.defense_regression_task"


# How many waiting submissions a new one of the other side pairs with at once.
WAITING_CLAIM_LIMIT = 20


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
    for the caller to judge with `pairing_evaluate_async` and `pairing_complete`.
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
        # A defence counts only once no break of the set still breaks it (and, on an agent
        # scenario, once its benign tasks have run): until then the player's current
        # defence stays theirs, and nobody is paired with this one.
        checking = team == Team.BLUE and (
            challenge.agent is not None or regression_set_exists(challenge=challenge)
        )
        held = {"active": False, "status": TeamSubmission.Status.CHECKING} if checking else {}
        if not checking:
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
            **held,
            **agent_fields,
        )
        if checking:
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
        return submission_pair(
            challenge=challenge,
            submission=submission,
            judge_own_pairing_here=judge_own_pairing_here,
        )


def submission_pair(
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
