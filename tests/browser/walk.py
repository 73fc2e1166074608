"""What every page a person walks through must hold, in a real Chromium: it fits the
screen (no sideways scroll), logs no console error and no CSP violation, and every link on
it to this site lands (answers below 400)."""

from urllib.parse import urljoin, urlsplit

# Init scripts run outside the page's policy, so this listener sees every violation,
# including ones Chromium does not print to the console.
RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__csp.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""

OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"
# The outermost elements that stick out on the right, to say what to fix.
WIDE = """[...document.querySelectorAll('body *')].filter((e) =>
  e.getBoundingClientRect().right > window.innerWidth + 1 &&
  !(e.parentElement && e.parentElement.getBoundingClientRect().right > window.innerWidth + 1)
).slice(0, 5).map((e) => e.tagName.toLowerCase() + '.' + [...e.classList].join('.') +
  ' ' + Math.round(e.getBoundingClientRect().right) + 'px')"""
LINKS = "[...document.querySelectorAll('a[href]')].map((a) => a.getAttribute('href'))"
# Links whose GET changes something or leaves the pages a person reads.
NOT_WALKED = ("/accounts/logout/", "/api/", "/ws/", "mailto:", "javascript:", "#")


class Walker:
    """Watches one page: call `check()` after each navigation."""

    def __init__(self, page, base_url: str):
        self.page, self.base_url = page, base_url
        self.errors: list[str] = []
        self.checked_links: set[str] = set()
        page.on(
            "console",
            lambda message: message.type == "error" and self.errors.append(message.text),
        )
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.add_init_script(RECORD_VIOLATIONS)

    def check(self, *, links: bool = True) -> None:
        page = self.page
        page.wait_for_load_state("load")
        where = page.url
        overflow = page.evaluate(OVERFLOW)
        assert overflow <= 0, f"{where} scrolls sideways by {overflow}px: {page.evaluate(WIDE)}"
        violations = page.evaluate("window.__csp || []")
        assert violations == [], f"{where}: CSP violations {violations}"
        assert self.errors == [], f"{where}: console errors {self.errors}"
        if links:
            self._links_land()

    def _links_land(self) -> None:
        own = urlsplit(self.base_url).netloc
        for href in self.page.evaluate(LINKS):
            if not href or href.startswith(NOT_WALKED):
                continue
            url = urljoin(self.page.url, href)
            if urlsplit(url).netloc != own or url in self.checked_links:
                continue
            self.checked_links.add(url)
            status = self.page.request.get(url, max_redirects=5).status
            assert status < 400, f"{self.page.url}: the link {href} answers {status}"
