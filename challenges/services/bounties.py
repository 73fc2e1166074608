"""Bounties (SPEC §10): what a creator offers for breaking a challenge. Only the offer is
written; who earns it is read from the wins as they stand (challenges/selectors/bounties.py)."""

from decimal import Decimal
from typing import Any

from challenges.models import Bounty, Challenge
from challenges.targets import codenames, has_several_targets
from core.errors import ApplicationError

AMOUNT_MAX = Decimal("1000000000")
# fastest_n pays at most this many players.
WINNERS_MAX = 10_000


def _invalid(field: str, message: str) -> ApplicationError:
    return ApplicationError(message, fields={field: [message]})


def bounty_check(
    *,
    challenge: Challenge,
    codename: str,
    kind: str,
    amount: Any,
    currency: str,
    cap: Any,
) -> tuple[str, Decimal, Decimal | None]:
    """The offer's codename, amount and cap as stored, or the first reason it cannot be."""
    if kind not in Bounty.Kind.values:
        raise _invalid("kind", "kind must be first_break, per_break or fastest_n.")
    amount = Decimal(str(amount)) if amount is not None else None
    if amount is None or not amount.is_finite() or amount <= 0 or amount > AMOUNT_MAX:
        raise _invalid("amount", "The amount must be more than 0.")
    if len(currency) != 3 or not currency.isascii() or not currency.isupper():
        raise _invalid("currency", "An ISO 4217 code such as USD.")
    cap = Decimal(str(cap)) if cap not in (None, "") else None
    if cap is not None and (not cap.is_finite() or cap <= 0 or cap > AMOUNT_MAX):
        raise _invalid("cap", "The cap must be more than 0.")
    if kind == Bounty.Kind.PER_BREAK:
        if cap is None or cap < amount:
            raise _invalid(
                "cap",
                "A per-break bounty needs a cap: the most paid in total, at least one amount.",
            )
    elif kind == Bounty.Kind.FASTEST_N:
        if cap is None or cap != cap.to_integral_value() or cap > WINNERS_MAX:
            raise _invalid(
                "cap",
                "A fastest_n bounty needs a cap: how many winners, a whole number up to "
                f"{WINNERS_MAX}.",
            )
    elif cap is not None:
        raise _invalid("cap", "A first-break bounty pays one winner; leave the cap out.")
    codename = (codename or "").strip()
    if codename:
        if not has_several_targets(challenge):
            raise _invalid(
                "codename", "This challenge has a single target: leave the codename out."
            )
        if codename not in codenames(challenge):
            names = ", ".join(codenames(challenge))
            raise _invalid("codename", f"Not one of this challenge's codenames ({names}).")
    return codename, amount, cap


def bounty_create(
    *,
    challenge: Challenge,
    kind: str,
    amount: Any,
    codename: str = "",
    currency: str = "USD",
    cap: Any = None,
) -> Bounty:
    codename, amount, cap = bounty_check(
        challenge=challenge,
        codename=codename,
        kind=kind,
        amount=amount,
        currency=currency,
        cap=cap,
    )
    return Bounty.objects.create(
        workspace_id=challenge.workspace_id,
        challenge=challenge,
        codename=codename,
        kind=kind,
        amount=amount,
        currency=currency,
        cap=cap,
    )


def bounty_update(
    *,
    bounty: Bounty,
    kind: str,
    amount: Any,
    codename: str = "",
    currency: str = "USD",
    cap: Any = None,
) -> Bounty:
    """Change the offer; the payouts follow at once, as they are read from the wins."""
    bounty.codename, bounty.amount, bounty.cap = bounty_check(
        challenge=bounty.challenge,
        codename=codename,
        kind=kind,
        amount=amount,
        currency=currency,
        cap=cap,
    )
    bounty.kind, bounty.currency = kind, currency
    bounty.save()
    return bounty


def bounty_delete(*, bounty: Bounty) -> None:
    bounty.delete()
