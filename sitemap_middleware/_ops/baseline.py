"""``check --baseline``: a regression gate against an earlier run.

A baseline is JSON written by ``check --write-baseline FILE``: per sitemap document its
kind, its error count and the URLs it listed. Compared with a later run, three things
fail the check (error findings, so exit status 1): more URLs gone than ``--max-removed``
allows (a count, or a percentage of the baseline's URLs), a document that had no error
and now has some, and a section that vanished (no page of it is left: a section is a
document's URL with its page number taken off, ``sitemap-products-3.xml`` ->
``sitemap-products.xml``, and none of its URLs is listed any more). What else changed
(URLs added, pages gone from a section that is still there) is said in notes.

Lastmods reset en masse fail too: when more than ``RESET_SHARE`` of the URLs dated in both
runs got one new lastmod (the same hour), a deploy or an import stamped them (a file's
mtime, a bulk ``UPDATE``), and crawlers stop trusting the site's lastmods. URLs that must
stay listed are named with ``--require`` (:func:`require_urls`).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .findings import CheckReport

__all__ = ["Baseline", "BaselineDocument", "MaxRemoved", "compare_baseline", "require_urls"]

FORMAT = "sitemap-middleware-baseline"
VERSION = 1
#: Removed URLs named in the report (the rest are counted).
SHOWN = 20
#: More than this share of the URLs dated in both runs moved to one new lastmod (within
#: the same hour): a reset, not edits.
RESET_SHARE = 0.5
#: ... counted only from this many such URLs (a small site's few edits are no reset).
RESET_MIN_URLS = 10
_PAGE = re.compile(r"-\d+(?:~[^/.]*)?(?=\.[^/]*$)")


def section_of(url: str) -> str:
    """The section a document belongs to: its URL without the page number."""
    return _PAGE.sub("", url, count=1)


@dataclass(frozen=True, slots=True)
class BaselineDocument:
    kind: str
    errors: int
    urls: tuple[str, ...]
    #: Each URL's lastmod (ISO 8601, UTC) or None, in the order of ``urls``.
    lastmods: tuple[str | None, ...] = ()

    def dated(self) -> dict[str, str]:
        return {url: mod for url, mod in zip(self.urls, self.lastmods, strict=False) if mod}


@dataclass(frozen=True, slots=True)
class Baseline:
    """Sitemap documents of one ``check`` run (robots.txt is not one of them)."""

    start: str
    documents: dict[str, BaselineDocument]

    @classmethod
    def from_report(cls, report: CheckReport) -> Baseline:
        documents = {
            doc.url: BaselineDocument(
                doc.kind,
                doc.findings.count("error"),
                tuple(report.listed.get(doc.url, ())),
                tuple(report.lastmods.get(doc.url, ())),
            )
            for doc in report.documents
            if doc.kind != "robots"
        }
        return cls(report.start, documents)

    def urls(self) -> set[str]:
        return {url for doc in self.documents.values() for url in doc.urls}

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "version": VERSION,
                "start": self.start,
                "documents": {
                    url: {
                        "kind": doc.kind,
                        "errors": doc.errors,
                        "urls": list(doc.urls),
                        "lastmods": list(doc.lastmods),
                    }
                    for url, doc in self.documents.items()
                },
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> Baseline:
        """Read :meth:`to_json` output; ``ValueError`` says what is wrong.

        The shape is checked, not coerced: a string where the URLs' list belongs would
        otherwise be read as one URL per character.
        """
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"not a check baseline: not JSON: {exc}") from None
        if not isinstance(data, dict) or (data.get("format"), data.get("version")) != (
            FORMAT,
            VERSION,
        ):
            raise ValueError(f"not a check baseline: expected format {FORMAT!r} version {VERSION}")
        start, raw = data.get("start"), data.get("documents")
        if not isinstance(start, str) or not isinstance(raw, dict):
            raise ValueError("not a check baseline: 'start' must be a URL, 'documents' an object")
        return cls(start, {url: _document(url, doc) for url, doc in raw.items()})

    def write(self, path: Path) -> None:
        """Write atomically (a temporary file beside it, then a rename)."""
        path = Path(path)
        fd, temporary = tempfile.mkstemp(dir=path.parent or ".", prefix=".baseline-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(self.to_json())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _document(url: str, doc: object) -> BaselineDocument:
    """One document of a baseline file, of exactly the shape :meth:`Baseline.to_json` writes."""
    if isinstance(doc, dict):
        kind, errors, urls = doc.get("kind"), doc.get("errors"), doc.get("urls")
        lastmods = doc.get("lastmods", [])
        if (
            isinstance(kind, str)
            and type(errors) is int
            and errors >= 0
            and isinstance(urls, list)
            and all(isinstance(u, str) for u in urls)
            and isinstance(lastmods, list)
            and len(lastmods) in (0, len(urls))
            and all(m is None or isinstance(m, str) for m in lastmods)
        ):
            return BaselineDocument(kind, errors, tuple(urls), tuple(lastmods))
    raise ValueError(
        f"not a check baseline: document {url!r} must be "
        '{"kind": "...", "errors": <count>, "urls": ["...", ...], "lastmods": [...]}'
    )


@dataclass(frozen=True, slots=True)
class MaxRemoved:
    """How many baseline URLs may disappear: a count, or a percentage (``5%``)."""

    value: float
    percent: bool

    @classmethod
    def parse(cls, text: str) -> MaxRemoved:
        number = text.strip().removesuffix("%")
        try:
            value = float(number) if text.strip().endswith("%") else int(number)
        except ValueError:
            value = -1
        if not 0 <= value <= (100 if text.strip().endswith("%") else float("inf")):
            raise ValueError(f"must be a count >= 0 or a percentage such as 5%, got {text!r}")
        return cls(float(value), text.strip().endswith("%"))

    def allows(self, removed: int, total: int) -> bool:
        if self.percent:
            return removed <= total * self.value / 100
        return removed <= self.value

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.percent else f"{int(self.value)}"


def compare_baseline(before: Baseline, report: CheckReport, max_removed: MaxRemoved) -> None:
    """Add the gate's findings (errors) and notes (what changed) to ``report``."""
    after = Baseline.from_report(report)
    old, new = before.urls(), after.urls()
    removed = sorted(old - new)
    added = len(new - old)
    share = f" ({len(removed) / len(old):.1%} of {len(old):,})" if old else ""
    report.notes.append(
        f"baseline: {len(removed):,} URLs removed{share}, {added:,} added "
        f"(--max-removed {max_removed})"
    )
    if removed and not max_removed.allows(len(removed), len(old)):
        report.add(
            "error",
            "baseline-urls-removed",
            f"{len(removed):,} URLs of the baseline are no longer listed{share}: more than "
            f"--max-removed {max_removed} allows",
        )
        for url in removed[:SHOWN]:
            report.add("error", "baseline-url-removed", "listed in the baseline, gone now", url=url)
    elif removed:
        report.notes += [f"baseline: no longer listed: {url}" for url in removed[:SHOWN]]
    sections_now = {section_of(url) for url in after.documents}
    gone: dict[str, list[BaselineDocument]] = {}
    for url, doc in before.documents.items():
        now = after.documents.get(url)
        if now is None:
            gone.setdefault(section_of(url), []).append(doc)
            if section_of(url) in sections_now:
                report.notes.append(f"baseline: page {url} is gone (its section remains)")
        elif doc.errors == 0 and now.errors > 0:
            report.add(
                "error",
                "baseline-now-invalid",
                f"valid in the baseline, now {now.errors:,} errors",
                document=url,
            )
    for section, documents in gone.items():
        if section in sections_now:
            continue
        urls = {url for doc in documents for url in doc.urls}
        if urls & new:  # e.g. a site that now fits one file: listed, elsewhere
            report.notes.append(f"baseline: {section} is gone, its URLs are listed elsewhere")
            continue
        report.add(
            "error",
            "baseline-section-vanished",
            f"the section's {len(documents):,} documents ({len(urls):,} URLs in the baseline) "
            "are gone, and none of its URLs is listed any more",
            document=section,
        )
    new_documents = [url for url in after.documents if url not in before.documents]
    if new_documents:
        report.notes.append(f"baseline: {len(new_documents):,} new documents")
    _check_resets(before, after, report)


def _check_resets(before: Baseline, after: Baseline, report: CheckReport) -> None:
    """Fail when most URLs dated in both runs moved to one new lastmod (the same hour)."""
    old = {url: mod for doc in before.documents.values() for url, mod in doc.dated().items()}
    new = {url: mod for doc in after.documents.values() for url, mod in doc.dated().items()}
    both = old.keys() & new.keys()
    moved = Counter(new[url][:13] for url in both if new[url] != old[url])  # by hour
    if len(both) < RESET_MIN_URLS or not moved:
        return
    hour, count = moved.most_common(1)[0]
    if count > len(both) * RESET_SHARE:
        report.add(
            "error",
            "baseline-lastmods-reset",
            f"{count:,} of {len(both):,} URLs dated in both runs got a new lastmod in the "
            f"same hour ({hour}:xx UTC): a deploy or an import reset them (crawlers stop "
            "trusting lastmods that move without the content)",
        )


def require_urls(report: CheckReport, urls: Iterable[str]) -> None:
    """``--require URL``: an error for each named URL no document lists."""
    listed = {url for urls_of in report.listed.values() for url in urls_of}
    for url in urls:
        if url not in listed:
            report.add("error", "required-url-missing", "named by --require, not listed", url=url)
