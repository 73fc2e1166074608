"""Attempts as CSV, streamed: the admin and the console API export the same file."""

import csv
from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse

CSV_COLUMNS = (
    "attempt_id",
    "created_at",
    "challenge",
    "player",
    "end_user_external_id",
    "succeeded",
    "score",
    "judge_rating",
    "tokens_total",
    "elapsed_ms",
    "source",
    "workflow_run_id",
    "prompt_length",
    "response_length",
)


def csv_cell(value: Any) -> Any:
    if not isinstance(value, str):
        return "" if value is None else value
    # A leading =, +, - or @ would run as a formula when the file is opened in a spreadsheet.
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


class _Echo:
    def write(self, value: str) -> str:
        return value


def _attempt_rows(attempts: QuerySet) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(CSV_COLUMNS)
    for attempt in attempts.select_related("end_user", "challenge").iterator(chunk_size=1000):
        row = (
            str(attempt.id),
            attempt.created_at.isoformat(),
            attempt.challenge.name,
            attempt.end_user.public_name,
            attempt.end_user.external_id,
            attempt.succeeded,
            attempt.score,
            attempt.judge_rating,
            attempt.tokens_total,
            attempt.elapsed_ms,
            attempt.source,
            attempt.workflow_run_id,
            attempt.prompt_length,
            attempt.response_length,
        )
        yield writer.writerow([csv_cell(value) for value in row])


def attempts_csv_response(
    attempts: QuerySet, *, filename: str = "attempts"
) -> StreamingHttpResponse:
    response = StreamingHttpResponse(_attempt_rows(attempts), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response
