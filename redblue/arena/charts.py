"""The security-versus-utility scatter plot, drawn as SVG on the server (no script)."""

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

WIDTH, HEIGHT, MARGIN = 320, 320, 36


def scatter_svg(*, points: list[tuple[str, float, float]], title: str) -> SafeString:
    """`points` are (label, security, utility); security runs along x, utility along y."""
    extent = max([1.0, *(abs(v) for _, s, u in points for v in (s, u))])
    span_x, span_y = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN

    def x(value: float) -> float:
        return round(MARGIN + (value + extent) / (2 * extent) * span_x, 1)

    def y(value: float) -> float:
        return round(HEIGHT - MARGIN - (value + extent) / (2 * extent) * span_y, 1)

    dots = format_html_join(
        "",
        '<circle cx="{}" cy="{}" r="5" class="arena-dot"><title>{}: security {}, utility {}'
        "</title></circle>",
        ((x(s), y(u), label, s, u) for label, s, u in points),
    )
    return format_html(
        '<svg class="arena-scatter" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
        'aria-label="{title}"><title>{title}</title>'
        '<line x1="{m}" y1="{cy}" x2="{xe}" y2="{cy}" class="arena-axis"/>'
        '<line x1="{cx}" y1="{m}" x2="{cx}" y2="{ye}" class="arena-axis"/>'
        '<text x="{xe}" y="{ty}" text-anchor="end">security</text>'
        '<text x="{tx}" y="{m}">utility</text>{dots}</svg>',
        w=WIDTH,
        h=HEIGHT,
        m=MARGIN,
        title=title,
        cx=x(0),
        cy=y(0),
        xe=WIDTH - MARGIN,
        ye=HEIGHT - MARGIN,
        ty=y(0) - 6,
        tx=x(0) + 6,
        dots=dots,
    )
