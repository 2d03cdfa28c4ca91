"""Whether a listed URL's answer keeps it indexable: one reading for ``check`` and the guard.

A listed URL must answer 200, carry no ``noindex`` (``X-Robots-Tag`` or
``<meta name=robots|googlebot>``) and declare no other canonical. These are the problems
Search Console reports as "Submitted URL not found (404)", "Page with redirect",
"Submitted URL marked 'noindex'" and "Alternate page with proper canonical tag".
``check --app`` turns each into a finding (``_ops/urlcheck.py``); the guard
(``_engine/guard.py``) into a verdict: the short ``said`` of the first problem.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Literal
from urllib.parse import urljoin, urlsplit, urlunsplit

__all__ = ["HEAD_BYTES", "Problem", "header_noindex", "page_signals", "same_url", "url_problems"]

#: Read at most this much of a page for its <head> (Google reads robots meta in the head).
HEAD_BYTES = 512 * 1024


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason a listed URL is not an indexable page."""

    severity: Literal["error", "warning"]  # check's finding levels
    code: str  # check's finding code
    message: str  # what check says
    said: str  # what the guard says: "answered 404", "said noindex (X-Robots-Tag)"
    #: A server-side failure (5xx, 429): worth reporting, never worth leaving a URL out.
    transient: bool = False


class _HeadSignals(HTMLParser):
    """Collects ``<meta name=robots|googlebot>`` and ``<link rel=canonical>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.robots: list[str] = []
        self.canonical: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name.lower(): (value or "") for name, value in attrs}
        if tag == "meta" and values.get("name", "").lower() in ("robots", "googlebot"):
            self.robots.append(values.get("content", "").lower())
        elif (
            tag == "link"
            and "canonical" in values.get("rel", "").lower().split()
            and self.canonical is None
        ):
            self.canonical = values.get("href", "").strip()


def page_signals(html: str) -> tuple[bool, str | None]:
    """(has a noindex robots meta, the canonical href or None) of an HTML page."""
    parser = _HeadSignals()
    parser.feed(html)
    parser.close()
    noindex = any(
        "noindex" in c or "none" in [v.strip() for v in c.split(",")] for c in parser.robots
    )
    return noindex, parser.canonical


def header_noindex(value: str | None) -> bool:
    """``X-Robots-Tag: noindex`` (or ``googlebot: noindex``, or ``none``)."""
    if not value:
        return False
    for part in value.lower().split(","):
        directive = part.rsplit(":", 1)[-1].strip()
        if directive in ("noindex", "none"):
            return True
    return False


def same_url(a: str, b: str) -> bool:
    """Whether two absolute URLs name one page (scheme and host case, empty path, fragment)."""
    pa, pb = urlsplit(a), urlsplit(b)
    norm = [
        urlunsplit((p.scheme.lower(), p.netloc.lower(), p.path or "/", p.query, ""))
        for p in (pa, pb)
    ]
    return norm[0] == norm[1]


def url_problems(
    url: str, status: int, header: Callable[[str], str | None], body: bytes
) -> list[Problem]:
    """What keeps ``url`` from being an indexable page, given its answer (no redirect
    followed; ``header`` reads a response header by lower-case name; ``body``: its first
    bytes, :data:`HEAD_BYTES` are enough)."""
    if 300 <= status < 400:
        location = header("location") or "?"
        return [
            Problem(
                "error",
                "url-redirect",
                f"answers {status} to {location}: list the target instead",
                f"redirected ({status}) to {location}",
            )
        ]
    if status != 200:
        code = "url-not-found" if status in (404, 410) else "url-status"
        transient = status >= 500 or status == 429
        return [
            Problem("error", code, f"answers {status}, not 200", f"answered {status}", transient)
        ]
    found: list[Problem] = []
    if header_noindex(header("x-robots-tag")):
        found.append(
            Problem(
                "error",
                "url-noindex",
                "X-Robots-Tag says noindex: listed pages must be indexable",
                "said noindex (X-Robots-Tag)",
            )
        )
    media = (header("content-type") or "").split(";")[0].strip().lower()
    if media not in ("text/html", "application/xhtml+xml"):
        return found
    noindex, canonical = page_signals(body[:HEAD_BYTES].decode("utf-8", "replace"))
    if noindex:
        found.append(
            Problem(
                "error",
                "url-noindex",
                "<meta name=robots> says noindex: listed pages must be indexable",
                "said noindex (<meta name=robots>)",
            )
        )
    if canonical is not None:
        target = urljoin(url, canonical)
        if not same_url(target, url):
            found.append(
                Problem(
                    "warning",
                    "url-canonical-elsewhere",
                    f"its canonical is {target}: list the canonical URL instead",
                    f"declared canonical {target}",
                )
            )
    return found
