from typing import Any

from django.db.models import Model
from django.utils.text import slugify


def unique_slug(
    *,
    model: type[Model],
    text: str,
    fallback: str,
    max_length: int = 70,
    exclude_id: Any = None,
) -> str:
    """A slug for `text` no other row of `model` holds: `base`, else `base-2`, `base-3` …

    One query; the model's unique index still settles a race between two writers.
    """
    base = slugify(text)[:max_length] or fallback
    taken = set(
        model.objects.filter(slug__startswith=base)
        .exclude(id=exclude_id)
        .values_list("slug", flat=True)
    )
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug
