"""Who earns each bounty (SPEC §10), read from the wins as they stand.

Nothing about a payout is stored: the winners are the players' earliest passing attempts
— not under review, so a win a review overturned stops earning and first break moves to
the next solver the moment the verdict changes; a near-copy the challenge refused was never
recorded. A query for the bounties, one for the wins and one for the players paid,
whatever their number (figures in docs/bounties.md).
"""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, QuerySet, Window
from django.db.models.functions import RowNumber
from django.urls import reverse

from challenges.models import Bounty, Challenge, ChallengeAttempt, Wave
from core.api import valid_uuids
from notifications.subjects import EventSubject
from players.models import EndUser
from players.selectors import rows_for_creator


@dataclass(frozen=True)
class Payout:
    bounty: Bounty
    end_user: EndUser
    attempt_id: Any
    codename: str
    won_at: datetime
    amount: Decimal
    # 1 for the first winner of this bounty, 2 for the next…
    place: int
    proof_id: Any

    @property
    def proof_path(self) -> str | None:
        return reverse("proof-page", args=[self.proof_id]) if self.proof_id else None

    @property
    def proof_url(self) -> str:
        return settings.SITE_URL + self.proof_path if self.proof_id else ""


@dataclass(frozen=True)
class BountyStanding:
    bounty: Bounty
    payouts: list[Payout]

    @property
    def paid(self) -> Decimal:
        return sum((payout.amount for payout in self.payouts), Decimal(0))

    @property
    def winners(self) -> int:
        return len(self.payouts)

    @property
    def places_left(self) -> int | None:
        allowed = self.bounty.winners_allowed
        return None if allowed is None else max(allowed - self.winners, 0)

    @property
    def label(self) -> str:
        """What players read: “First break: 50 USD”."""
        bounty = self.bounty
        money = f"{_plain(bounty.amount)} {bounty.currency}"
        if bounty.kind == Bounty.Kind.FIRST_BREAK:
            text = f"First break: {money}"
        elif bounty.kind == Bounty.Kind.FASTEST_N:
            text = f"Fastest {bounty.winners_allowed}: {money} each"
        else:
            text = f"Every break: {money} each, up to {_plain(bounty.cap)} {bounty.currency}"
        return f"{text} (on {bounty.codename})" if bounty.codename else text


def _plain(amount: Decimal | None) -> str:
    """50 rather than 50.00; 12.50 stays."""
    if amount is None:
        return ""
    return f"{amount:f}".removesuffix(".00")


def bounties_for_creator(
    *, user: AbstractBaseUser, workspace_id: Any = None, challenge_id: Any = None
) -> QuerySet[Bounty]:
    bounties = rows_for_creator(Bounty.objects, user=user, workspace_id=workspace_id)
    if challenge_id is not None:
        bounties = bounties.filter(challenge_id=challenge_id)
    return bounties.select_related("challenge").order_by("created_at", "id")


def waves_for_creator(*, user: AbstractBaseUser, workspace_id: Any = None) -> QuerySet[Wave]:
    waves = rows_for_creator(Wave.objects, user=user, workspace_id=workspace_id)
    return waves.prefetch_related("challenges").order_by("opens_at", "id")


@dataclass(frozen=True)
class _Win:
    attempt_id: Any
    challenge_id: Any
    end_user_id: Any
    codename: str
    won_at: datetime
    has_proof: bool


def _first_wins(challenge_ids: set[Any]) -> list[_Win]:
    """Each player's earliest standing win per challenge and codename, earliest first; as
    plain rows (thousands of model instances would cost more than the query)."""
    if not challenge_ids:
        return []
    rows = (
        ChallengeAttempt.objects.filter(
            challenge_id__in=challenge_ids, succeeded=True, under_review=False
        )
        .annotate(
            place=Window(
                RowNumber(),
                partition_by=[F("challenge_id"), F("end_user_id"), F("codename")],
                order_by=[F("created_at").asc(), F("id").asc()],
            )
        )
        .filter(place=1)
        .order_by("created_at", "id")
        .values_list("id", "challenge_id", "end_user_id", "codename", "created_at", "config_sha256")
    )
    return [
        _Win(attempt_id, challenge_id, end_user_id, codename, won_at, bool(config_sha256))
        for attempt_id, challenge_id, end_user_id, codename, won_at, config_sha256 in rows
    ]


def bounty_standings(*, bounties: list[Bounty]) -> list[BountyStanding]:
    """Each bounty with the payouts it owes now, in the order given: three queries (the
    wins, then the players paid) whatever the number of bounties."""
    bounties = list(bounties)
    wins_of: dict[Any, list[_Win]] = {}
    for win in _first_wins({bounty.challenge_id for bounty in bounties}):
        wins_of.setdefault(win.challenge_id, []).append(win)
    owed: list[tuple[Bounty, list[_Win]]] = []
    for bounty in bounties:
        chosen: list[_Win] = []
        paid_players = set()
        allowed = bounty.winners_allowed
        for win in wins_of.get(bounty.challenge_id, []):
            if allowed is not None and len(chosen) >= allowed:
                break
            if bounty.codename and win.codename != bounty.codename:
                continue
            if win.end_user_id in paid_players:
                continue  # a player is paid once per bounty, for their earliest win
            paid_players.add(win.end_user_id)
            chosen.append(win)
        owed.append((bounty, chosen))
    player_ids = {win.end_user_id for _, chosen in owed for win in chosen}
    players = EndUser.objects.in_bulk(player_ids) if player_ids else {}
    return [
        BountyStanding(
            bounty=bounty,
            payouts=[
                Payout(
                    bounty=bounty,
                    end_user=players[win.end_user_id],
                    attempt_id=win.attempt_id,
                    codename=win.codename,
                    won_at=win.won_at,
                    amount=bounty.amount,
                    place=place,
                    proof_id=win.attempt_id if win.has_proof else None,
                )
                for place, win in enumerate(chosen, start=1)
            ],
        )
        for bounty, chosen in owed
    ]


def payouts_for(*, bounties: QuerySet[Bounty]) -> list[Payout]:
    """Every payout owed, earliest win first."""
    standings = bounty_standings(bounties=list(bounties.select_related("challenge")))
    payouts = [payout for standing in standings for payout in standing.payouts]
    return sorted(payouts, key=lambda payout: (payout.won_at, str(payout.attempt_id)))


def challenge_bounties(*, challenge: Challenge) -> list[BountyStanding]:
    """The challenge's bounties for its page (and `GET /web/api/challenges/{id}`), with what
    is still to win."""
    return challenges_bounties(challenges=[challenge]).get(challenge.id, [])


def challenges_bounties(*, challenges: list[Challenge]) -> dict[Any, list[BountyStanding]]:
    """The bounties of several challenges (a page of the web API's list), by challenge id:
    the same reads as for one challenge, whatever their number."""
    if not challenges:
        return {}
    bounties = Bounty.objects.filter(challenge__in=[c.id for c in challenges]).select_related(
        "challenge"
    )
    standings: dict[Any, list[BountyStanding]] = {}
    for standing in bounty_standings(bounties=list(bounties)):
        standings.setdefault(standing.bounty.challenge_id, []).append(standing)
    return standings


def challenge_waves(*, challenge: Challenge) -> list[Wave]:
    """The challenge's waves for its page, in schedule order."""
    return sorted(challenge.waves.all(), key=lambda wave: (wave.opens_at, wave.closes_at))


def wave_subjects(wave_ids: list[str]) -> dict[str, EventSubject]:
    """Waves named for the events about them (notifications.subjects); a wave has no page
    of its own, so the link goes to its first challenge, else to the home page."""
    waves = Wave.objects.filter(id__in=valid_uuids(wave_ids)).prefetch_related("challenges")
    subjects = {}
    for wave in waves:
        first = min(wave.challenges.all(), key=lambda c: (c.name, str(c.id)), default=None)
        path = reverse("challenge-page", args=[first.slug]) if first else reverse("home")
        subjects[str(wave.id)] = EventSubject(name=wave.name, path=path)
    return subjects
