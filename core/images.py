"""Which remote images the site shows: https ones on hosts the operator lists in
MARKDOWN_IMAGE_HOSTS, the same list the Content-Security-Policy's img-src allows.

Any other remote image would let whoever chose it count and locate the players who load
it. Templates use the filter as `{% load images %}{% if url|image_url_allowed %}`.
"""

from urllib.parse import urlsplit

from django import template
from django.conf import settings

register = template.Library()


@register.filter
def image_url_allowed(url: str) -> bool:
    try:
        parts = urlsplit(str(url or "").strip())
        host = parts.hostname
        port = parts.port
    except ValueError:
        return False
    return (
        parts.scheme == "https"
        and port in (None, 443)
        and not parts.username
        and host is not None
        and host in settings.MARKDOWN_IMAGE_HOSTS
    )
