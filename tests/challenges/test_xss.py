"""Creator Markdown cannot run script in a player's page; theme values stay whitelisted."""

from html.parser import HTMLParser

import pytest
from django.test import Client, override_settings

from core.markdown import render_markdown
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

# Each one sets window.__xss if it ever runs; the browser test loads them for real.
VECTORS = [
    "<script>window.__xss=1</script>",
    "<SCRIPT SRC=https://evil.test/xss.js></SCRIPT>",
    '<img src=x onerror="window.__xss=1">',
    '<img src="javascript:window.__xss=1">',
    '<svg onload="window.__xss=1"></svg>',
    "<svg><script>window.__xss=1</script></svg>",
    '<svg><a xlink:href="javascript:window.__xss=1"><text y="20">svg link</text></a></svg>',
    '<body onload="window.__xss=1">',
    '<iframe src="javascript:window.__xss=1"></iframe>',
    '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
    "[md link](javascript:window.__xss=1)",
    "[md link upper](JaVaScRiPt:window.__xss=1)",
    '[md title](javascript:window.__xss=1 "title")',
    '<a href="jav&#x09;ascript:window.__xss=1">tab entity</a>',
    '<a href="&#106;avascript:window.__xss=1">decimal entity</a>',
    '<a href="javascript&colon;window.__xss=1">colon entity</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD53aW5kb3cuX194c3M9MTwvc2NyaXB0Pg==">data link</a>',
    "![data image](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9IndpbmRvdy5fX3hzcz0xIj4=)",
    '<a href="vbscript:msgbox(1)">vbscript</a>',
    '<div style="background:url(javascript:window.__xss=1)">style url</div>',
    '<style>body{background:url("javascript:window.__xss=1")}</style>',
    '<p style="width: expression(window.__xss=1)">css expression</p>',
    '<input autofocus onfocus="window.__xss=1">',
    '<details open ontoggle="window.__xss=1"><summary>toggle</summary>x</details>',
    '<object data="javascript:window.__xss=1"></object>',
    '<embed src="javascript:window.__xss=1">',
    '<math><mtext><table><mglyph><style><img src=x onerror="window.__xss=1">',
    '<img """><script>window.__xss=1</script>">',
    "<scr<script>ipt>window.__xss=1</scr</script>ipt>",
    '<a href="https://ok.test" onclick="window.__xss=1">onclick link</a>',
    '<form action="javascript:window.__xss=1"><button>go</button></form>',
    '<button formaction="javascript:window.__xss=1">formaction</button>',
    '<meta http-equiv="refresh" content="0;url=javascript:window.__xss=1">',
    '<base href="javascript:window.__xss=1//">',
    '<link rel="stylesheet" href="javascript:window.__xss=1">',
    "<img src=x:alert(1) onerror=window.__xss=1//",
    '<noscript><p title="</noscript><img src=x onerror=window.__xss=1>"></noscript>',
    "<template><script>window.__xss=1</script></template>",
    '<video><source onerror="window.__xss=1"></video>',
    "<audio src=x onerror=window.__xss=1>",
    '<marquee onstart="window.__xss=1">marquee</marquee>',
    '<div onmouseover="window.__xss=1">hover me</div>',
    '<img srcset="x 1x" onerror="window.__xss=1">',
    "<x onclick=window.__xss=1>custom tag</x>",
    '<a href="  javascript:window.__xss=1">leading spaces</a>',
    "<IMG SRC=`javascript:window.__xss=1`>",
]
INSTRUCTIONS = "# Try me\n\n" + "\n\n".join(VECTORS) + "\n\nThe end."

URL_ATTRIBUTES = {
    "href",
    "src",
    "srcset",
    "action",
    "formaction",
    "data",
    "xlink:href",
    "background",
}
SAFE_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "details", "em", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))


def executable_parts(html: str) -> list[str]:
    """Everything in `html` a browser could run: script-ish tags, handlers, script URLs."""
    parser = _Tags()
    parser.feed(html)
    found = []
    for tag, attrs in parser.tags:
        if tag not in SAFE_TAGS:
            found.append(f"tag <{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                found.append(f"handler {name} on <{tag}>")
            if name == "style":
                found.append(f"style attribute on <{tag}>")
            if name in URL_ATTRIBUTES and value is not None:
                # The parser has decoded entities; browsers also drop whitespace and controls.
                compact = "".join(ch for ch in value if ch > " ").lower()
                scheme = compact.split(":", 1)[0] if ":" in compact else ""
                if scheme and scheme not in ("http", "https", "mailto"):
                    found.append(f"{scheme}: URL in {name} on <{tag}>")
    return found


def instructions_section(page: str) -> str:
    start = page.index('<section class="card instructions">')
    return page[
        start + len('<section class="card instructions">') : page.index("</section>", start)
    ]


def test_there_are_at_least_thirty_vectors():
    assert len(VECTORS) >= 30


@pytest.mark.parametrize("vector", VECTORS)
def test_it_neutralises_each_vector(vector):
    assert executable_parts(render_markdown(vector)) == []


def test_it_finds_nothing_executable_in_the_page(workspace):
    make_challenge(workspace=workspace, name="XSS", slug="xss", instructions_md=INSTRUCTIONS)

    page = Client().get("/challenges/xss/").content.decode()

    section = instructions_section(page)
    assert "Try me" in section
    assert executable_parts(section) == []
    assert "window.__xss=1</script>" not in page
    anchors = [attrs for tag, attrs in _parsed(section) if tag == "a"]
    assert anchors and all(("rel", "noopener noreferrer") in attrs for attrs in anchors)


def _parsed(html: str):
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def test_the_checker_itself_catches_live_vectors():
    # Guards the guard: unsanitised vectors must be reported.
    assert executable_parts('<img src=x onerror="a()">')
    assert executable_parts('<a href="jav&#x09;ascript:a()">x</a>')
    assert executable_parts("<script>a()</script>")
    assert executable_parts('<p style="x">x</p>')


@pytest.mark.parametrize(
    "theme",
    [
        {"accent": "red; background: url(https://evil.test)"},
        {"accent": "expression(alert(1))"},
        {"font": "</style><script>alert(1)</script>"},
        {"radius": "4px; }"},
        {"radius": 999},
        {"logo_url": "javascript:alert(1)"},
        {"logo_url": 'https://ok.test/a.png") ; background: url("https://evil.test'},
        {"logo_url": "data:image/png;base64,AAAA"},
        {"position": "fixed"},
        ["not", "an", "object"],
    ],
)
def test_it_refuses_theme_values_outside_the_whitelist(creator_api, theme):
    response = creator_api.post(
        "/console/api/challenges",
        {"name": "Themed", "success_pattern": "x", "theme": theme},
        format="json",
    )
    assert response.status_code == 400
    assert "theme" in response.json()["error"]["fields"]


@override_settings(MARKDOWN_IMAGE_HOSTS=["cdn.example.com"])
def test_it_accepts_a_whitelisted_theme(creator_api):
    theme = {
        "accent": "#3b82f6",
        "background": "#0b1020",
        "font": "serif",
        "radius": 8,
        "logo_url": "https://cdn.example.com/logo.png",
    }
    response = creator_api.post(
        "/console/api/challenges",
        {"name": "Themed", "success_pattern": "x", "theme": theme},
        format="json",
    )
    assert response.status_code == 201, response.json()
    page = Client().get(f"/challenges/{response.json()['slug']}/").content.decode()
    for declaration in ("--accent: #3b82f6", "--bg: #0b1020", "--radius: 8px"):
        assert declaration in page
    assert '--logo-url: url("https://cdn.example.com/logo.png")' in page
