"""Writes every app's services share (as HackSoft's styleguide keeps them in one module)."""

from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from django.db import models

from core.errors import ApplicationError, fields_invalid

ModelT = TypeVar("ModelT", bound=models.Model)


def model_update(
    *,
    instance: ModelT,
    data: Mapping[str, Any],
    fields: Collection[str],
    errors: Callable[[ModelT], dict[str, list[str]]],
) -> ModelT:
    """Set a create's or an update's `data` on `instance`, unsaved, and check the whole row.

    A name outside `fields` refuses the write, each unknown field named; `errors` lists
    every problem of the instance as it now stands, keyed by field, and any one refuses the
    write with all of them (SPEC §5). The caller cleans what it keeps and saves, inside
    its own transaction.
    """
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ApplicationError(
            "Unknown fields: " + ", ".join(unknown) + ".",
            fields={name: ["Unknown field."] for name in unknown},
        )
    for name, value in data.items():
        setattr(instance, name, value)
    problems = errors(instance)
    if problems:
        raise fields_invalid(problems)
    return instance
