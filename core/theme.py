"""A workspace's theme: the keys a creator may set, their checks, and the CSS they give.

Shared by every app that draws a themed page (challenge pages, collections, red/blue).
"""

import re
from typing import Any
from urllib.parse import urlparse

from core.images import image_url_allowed

_COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
_FONTS = ("system", "serif", "mono", "rounded")


def _is_color(value: Any) -> bool:
    return isinstance(value, str) and bool(_COLOR.match(value))


def _is_font(value: Any) -> bool:
    return value in _FONTS


def _is_radius(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 32


def _is_https_url(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > 500:
        return False
    parsed = urlparse(value)
    return (
        parsed.scheme == "https" and bool(parsed.netloc) and not any(c in value for c in "\"'()<> ")
    )


# Theme key -> (CSS variable it sets, value check, what a creator is told on a bad value).
THEME_KEYS: dict[str, tuple[str, Any, str]] = {
    "accent": ("--accent", _is_color, "a hex colour such as #3b82f6"),
    "background": ("--bg", _is_color, "a hex colour"),
    "surface": ("--surface", _is_color, "a hex colour"),
    "text": ("--text", _is_color, "a hex colour"),
    "muted": ("--muted", _is_color, "a hex colour"),
    "font": ("--font", _is_font, "one of " + ", ".join(_FONTS)),
    "radius": ("--radius", _is_radius, "a whole number of pixels from 0 to 32"),
    "logo_url": ("--logo-url", _is_https_url, "an https:// URL"),
}


def theme_errors(theme: Any) -> list[str]:
    if not isinstance(theme, dict):
        return ["The theme must be an object of theme keys."]
    errors = []
    for key, value in theme.items():
        if key not in THEME_KEYS:
            allowed = ", ".join(sorted(THEME_KEYS))
            errors.append(f"Unknown theme key '{key}'; allowed keys: {allowed}.")
            continue
        _, check, expected = THEME_KEYS[key]
        if not check(value):
            errors.append(f"Theme '{key}' must be {expected}.")
    return errors


FONT_STACKS = {
    "system": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
    "serif": "Georgia, 'Times New Roman', serif",
    "mono": "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace",
    "rounded": "ui-rounded, 'Nunito', system-ui, sans-serif",
}


def theme_style(theme: dict) -> str:
    """CSS custom properties for the whitelisted theme keys whose values still check out.

    Values were validated when saved; they are checked again here so a row written some
    other way cannot inject CSS, and the template escapes the result as well.
    """
    declarations = []
    for key, value in (theme or {}).items():
        if key not in THEME_KEYS:
            continue
        variable, check, _ = THEME_KEYS[key]
        if not check(value):
            continue
        if key == "font":
            value = FONT_STACKS[value]
        elif key == "radius":
            value = f"{value}px"
        elif key == "logo_url":
            if not image_url_allowed(value):
                continue
            value = f'url("{value}")'
        declarations.append(f"{variable}: {value}")
    return "; ".join(declarations)
