"""Attempts as CSV or JSON Lines, streamed: the admin and the console API export the same
rows. Prompts and replies are the stored ones: masked, and only where kept (winning
attempts, or every attempt when the challenge keeps failed prompts)."""

import csv
import json
from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from rest_framework.renderers import BaseRenderer

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
    "prompt",
    "response",
)
CSV_MEDIA_TYPE = "text/csv"
JSONL_MEDIA_TYPE = "application/x-ndjson"


def csv_cell(value: Any) -> Any:
    if not isinstance(value, str):
        return "" if value is None else value
    # A leading =, +, - or @ would run as a formula when the file is opened in a spreadsheet.
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


class _Echo:
    def write(self, value: str) -> str:
        return value


def _attempt_values(attempts: QuerySet) -> Iterator[tuple]:
    for attempt in attempts.select_related("end_user", "challenge").iterator(chunk_size=1000):
        yield (
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
            attempt.prompt,
            attempt.response,
        )


def _attempt_rows(attempts: QuerySet) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(CSV_COLUMNS)
    for row in _attempt_values(attempts):
        yield writer.writerow([csv_cell(value) for value in row])


def _attempt_lines(attempts: QuerySet) -> Iterator[str]:
    for row in _attempt_values(attempts):
        yield json.dumps(dict(zip(CSV_COLUMNS, row, strict=True)), ensure_ascii=False) + "\n"


def attempts_csv_response(
    attempts: QuerySet, *, filename: str = "attempts"
) -> StreamingHttpResponse:
    response = StreamingHttpResponse(_attempt_rows(attempts), content_type=CSV_MEDIA_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response


def attempts_jsonl_response(
    attempts: QuerySet, *, filename: str = "attempts"
) -> StreamingHttpResponse:
    """One JSON object an attempt a line, with the CSV's columns as keys."""
    response = StreamingHttpResponse(_attempt_lines(attempts), content_type=JSONL_MEDIA_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{filename}.jsonl"'
    return response


class CsvExportRenderer(BaseRenderer):
    """Lets `Accept: text/csv` reach the view, which answers with a streamed file."""

    media_type = CSV_MEDIA_TYPE
    format = "csv"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        # Only reached for an error body; the view switches those back to JSON first.
        return json.dumps(data).encode()


class JsonlExportRenderer(CsvExportRenderer):
    media_type = JSONL_MEDIA_TYPE
    format = "jsonl"
