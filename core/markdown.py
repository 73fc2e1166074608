"""Creator Markdown to safe HTML: rendered with Markdown, then cleaned with nh3 (SPEC §7)."""

import markdown as markdown_lib
import nh3

from core.images import image_url_allowed

ALLOWED_TAGS = {
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "code",
    "del",
    "details",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "kbd",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "img": {"src", "alt", "title", "width", "height"},
    "th": {"align"},
    "td": {"align"},
    "ol": {"start"},
}
# Relative URLs stay allowed; any scheme other than these (javascript:, data:, vbscript:) goes.
URL_SCHEMES = {"http", "https", "mailto"}
# Tags whose text is dropped with them, not kept as stray text.
DROPPED_WITH_CONTENT = {"script", "style", "noscript", "iframe", "object", "embed", "template"}


# Remote images only from the hosts the CSP allows; the rest lose their src (no request).
def _drop_unlisted_images(element: str, attribute: str, value: str) -> str | None:
    if element == "img" and attribute == "src" and not image_url_allowed(value):
        return None
    return value


def render_markdown(text: str) -> str:
    html = markdown_lib.markdown(
        text or "", extensions=["fenced_code", "tables", "sane_lists"], output_format="html"
    )
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        clean_content_tags=DROPPED_WITH_CONTENT,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        attribute_filter=_drop_unlisted_images,
        strip_comments=True,
    )
