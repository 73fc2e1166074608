"""Numbers and settings in a player's words: "1 attempt", "79 tokens", "3.2 s"."""

from typing import Any

from django import template
from django.template.defaultfilters import pluralize
from django.utils.formats import date_format

register = template.Library()

STRATEGY_WORDS = {
    "first": "First to solve wins",
    "fastest": "Fastest reply wins",
    "fewest_tokens": "Fewest tokens wins",
    "highest_rating": "Highest judge rating wins",
    "custom": "Custom scoring",
}
COLLECTION_STRATEGY_WORDS = {
    "sum": "Most points wins",
    "fastest_total": "Least total time wins",
    "fewest_tokens_total": "Fewest total tokens wins",
    "highest_avg_rating": "Best average rating wins",
    "custom": "Custom scoring",
}
EVALUATOR_WORDS = {
    "rules": "Checked by a rule",
    "llm-judge": "Judged by an AI",
    "custom": "Custom judge",
}


DEFENCE_LAYER_WORDS = {
    "input_filter": "input filter",
    "output_guard": "output guard",
    "llm_check": "reviewer",
}


def outcome_words(
    *, result: Any, guess_mode: bool, guessed: bool, strategy: str = ""
) -> dict[str, str]:
    """The verdict's headline, the reply's label and the score with its unit, the same for
    the page's form post and its streamed play: a guess-mode reply is not judged, and a
    layer that answered in the model's place is named."""
    defence = getattr(result, "defence", None)
    layer = DEFENCE_LAYER_WORDS.get(defence.kind, "defence") if defence else None
    if getattr(result, "verdict_status", "") == "under_review":
        title = "Under review: the judges did not agree, so a person will decide."
    elif result.challenge_succeeded:
        title = "Challenge solved! The defence is broken."
    elif guessed:
        title = "That is not the secret."
    elif layer:
        title = f"Not this time: the {layer} held."
    elif guess_mode:
        title = "Replies are not judged here: type the secret into the answer box."
    else:
        title = "Not this time: the defence held."
    reply_label = f"The {layer} answered in the model's place" if layer else "Model reply"
    return {
        "title": title,
        "reply_label": reply_label,
        "score": score_words(strategy, getattr(result, "score", None)),
    }


def score_words(strategy: str, score: Any) -> str:
    """An attempt's score in the unit its board ranks on; nothing where it means nothing."""
    if score is None or strategy == "first":
        return ""
    if strategy == "fastest":
        return f"Time {seconds(score)}"
    if strategy == "fewest_tokens":
        return tokens(score)
    if strategy == "highest_rating":
        return f"Rating {score:g}"
    return f"Score {score:g}"


@register.simple_tag
def outcome(result: Any, challenge: Any, guessed: bool = False) -> dict[str, str]:
    return outcome_words(
        result=result,
        guess_mode=challenge.answer_mode == "guess",
        guessed=bool(guessed),
        strategy=challenge.scoring_strategy,
    )


@register.filter
def strategy_words(strategy: str) -> str:
    return STRATEGY_WORDS.get(strategy, strategy)


@register.filter
def collection_strategy_words(strategy: str) -> str:
    return COLLECTION_STRATEGY_WORDS.get(strategy, strategy)


@register.filter
def evaluator_words(evaluator_type: str) -> str:
    return EVALUATOR_WORDS.get(evaluator_type, evaluator_type)


def _count(number: Any, noun: str) -> str:
    if number is None:
        return "–"
    number = int(number)
    return f"{number:,} {noun}{pluralize(number)}"


@register.filter
def tokens(number: Any) -> str:
    return _count(number, "token")


@register.filter
def attempts(number: Any) -> str:
    return _count(number, "attempt")


@register.filter
def seconds(milliseconds: Any) -> str:
    if milliseconds is None:
        return "–"
    value = float(milliseconds) / 1000
    return f"{value:.1f} s" if value < 100 else f"{value:,.0f} s"


@register.filter
def points(number: Any) -> str:
    if number is None:
        return "–"
    return f"{float(number):,.0f} pts" if float(number) != 1 else "1 pt"


@register.simple_tag
def board_value(strategy: str, row: Any) -> str:
    """What a leaderboard row was ranked on, with its unit."""
    if strategy == "fastest":
        return seconds(row.elapsed_ms)
    if strategy == "fewest_tokens":
        return tokens(row.tokens_total)
    if strategy == "highest_rating":
        return "–" if row.judge_rating is None else f"rating {row.judge_rating}"
    if strategy == "custom":
        return "–" if row.score is None else f"{row.score:g} points"
    return f"solved {date_format(row.achieved_at, 'M j, H:i')}"


@register.simple_tag
def appeal_of(attempt: Any) -> Any:
    """The player's appeal of the attempt (prefetched reviews), or None."""
    return next((review for review in attempt.reviews.all() if review.kind == "appeal"), None)
