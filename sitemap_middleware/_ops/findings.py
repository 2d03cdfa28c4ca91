"""What the checker reports: findings per document and for the site, and the summary.

Every finding has a stable ``code`` (the docs list them), a severity, the document it
was found in and, where it concerns one listed URL, that URL. ``error`` findings make
``sitemap-middleware check`` exit with status 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["CheckReport", "DocumentReport", "Finding"]

Severity = Literal["error", "warning", "info"]
#: Findings kept per code and document; the rest are counted ("and 1,234 more").
MAX_PER_CODE = 20


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem (or note): what rule, how bad, where."""

    severity: Severity
    code: str
    message: str
    document: str | None = None
    url: str | None = None

    def as_dict(self) -> dict[str, str]:
        out = {"severity": self.severity, "code": self.code, "message": self.message}
        if self.document:
            out["document"] = self.document
        if self.url:
            out["url"] = self.url
        return out


@dataclass(slots=True)
class _Findings:
    """Findings with a cap per code; everything is still counted."""

    kept: list[Finding] = field(default_factory=list)
    counts: Counter[tuple[str, Severity]] = field(default_factory=Counter)

    def add(self, finding: Finding) -> None:
        key = (finding.code, finding.severity)
        self.counts[key] += 1
        if self.counts[key] <= MAX_PER_CODE:
            self.kept.append(finding)

    def omitted(self) -> dict[str, int]:
        return {code: n - MAX_PER_CODE for (code, _), n in self.counts.items() if n > MAX_PER_CODE}

    def count(self, severity: Severity) -> int:
        return sum(n for (_, s), n in self.counts.items() if s == severity)


@dataclass(slots=True)
class DocumentReport:
    """One fetched document (robots.txt, an index, a urlset, a text sitemap)."""

    url: str
    kind: str = "unknown"
    status: int = 0
    entries: int = 0
    bytes: int = 0
    wire_bytes: int = 0
    findings: _Findings = field(default_factory=_Findings)

    def add(self, severity: Severity, code: str, message: str, url: str | None = None) -> None:
        self.findings.add(Finding(severity, code, message, self.url, url))

    def as_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "kind": self.kind,
            "status": self.status,
            "entries": self.entries,
            "bytes": self.bytes,
            "wire_bytes": self.wire_bytes,
            "errors": self.findings.count("error"),
            "warnings": self.findings.count("warning"),
            "findings": [f.as_dict() for f in self.findings.kept],
            "omitted": self.findings.omitted(),
        }


@dataclass(slots=True)
class CheckReport:
    """Everything one ``check`` run found."""

    start: str
    documents: list[DocumentReport] = field(default_factory=list)
    site: _Findings = field(default_factory=_Findings)
    notes: list[str] = field(default_factory=list)
    urls: int = 0
    urls_checked: int = 0
    requests: int = 0
    #: Each parsed urlset or text sitemap's URLs, in order (for ``--write-baseline``).
    listed: dict[str, list[str]] = field(default_factory=dict)
    #: ... and their lastmods (ISO 8601 in UTC, or None), in the same order.
    lastmods: dict[str, list[str | None]] = field(default_factory=dict)
    #: Requests that got no answer, by kind (``Fetched.failure``): the first URL of each,
    #: for the CLI's hints (not in the JSON).
    failures: dict[str, str] = field(default_factory=dict)

    def failed(self, kind: str | None, url: str) -> None:
        """A request to ``url`` got no answer (``kind``: ``Fetched.failure``)."""
        self.failures.setdefault(kind or "http", url)

    def add(self, severity: Severity, code: str, message: str, **where: str | None) -> None:
        self.site.add(Finding(severity, code, message, where.get("document"), where.get("url")))

    def count(self, severity: Severity) -> int:
        return self.site.count(severity) + sum(d.findings.count(severity) for d in self.documents)

    @property
    def ok(self) -> bool:
        return self.count("error") == 0

    def codes(self) -> Counter[str]:
        """How often each code was found, over the site and every document."""
        total: Counter[str] = Counter()
        for findings in [self.site, *(d.findings for d in self.documents)]:
            for (code, _), n in findings.counts.items():
                total[code] += n
        return total

    def as_dict(self) -> dict[str, object]:
        return {
            "start": self.start,
            "ok": self.ok,
            "summary": {
                "documents": len(self.documents),
                "urls": self.urls,
                "urls_checked": self.urls_checked,
                "requests": self.requests,
                "errors": self.count("error"),
                "warnings": self.count("warning"),
                "codes": dict(sorted(self.codes().items())),
            },
            "notes": self.notes,
            "documents": [d.as_dict() for d in self.documents],
            "findings": [f.as_dict() for f in self.site.kept],
            "omitted": self.site.omitted(),
        }

    def format_text(self, footer: Sequence[str] = ()) -> str:
        """A human-readable report: each document with its findings, the notes, then
        ``footer`` (the CLI's hints and table) and the verdict line."""
        lines: list[str] = []
        for doc in self.documents:
            size = f"{doc.bytes:,} bytes" + (
                f" ({doc.wire_bytes:,} sent)" if doc.wire_bytes != doc.bytes else ""
            )
            lines.append(
                f"{doc.url}  [{doc.kind}, HTTP {doc.status}, {doc.entries:,} entries, {size}]"
            )
            lines += [_line(f) for f in doc.findings.kept]
            lines += [f"  ... and {n:,} more {code}" for code, n in doc.findings.omitted().items()]
        if self.site.kept:
            lines.append("site-wide:")
            lines += [_line(f, url_first=True) for f in self.site.kept]
            lines += [f"  ... and {n:,} more {code}" for code, n in self.site.omitted().items()]
        lines += [f"note: {note}" for note in self.notes]
        lines += footer
        lines.append(self.summary())
        return "\n".join(lines)

    def summary(self) -> str:
        """The verdict line: OK or FAILED, with the counts."""
        verdict = "OK" if self.ok else "FAILED"
        return (
            f"{verdict}: {len(self.documents)} documents, {self.urls:,} URLs listed"
            + (f", {self.urls_checked:,} URLs fetched" if self.urls_checked else "")
            + f", {self.count('error'):,} errors, {self.count('warning'):,} warnings"
            + f" ({self.requests:,} requests)"
        )


def github_annotations(report: CheckReport) -> str:
    """The report as GitHub Actions workflow commands: an ``::error``/``::warning`` line
    per finding (title: its code), then the verdict as a ``::notice``."""
    lines = []
    findings = [f for doc in report.documents for f in doc.findings.kept] + report.site.kept
    for finding in findings:
        where = finding.url or finding.document or report.start
        level = finding.severity if finding.severity != "info" else "notice"
        lines.append(f"::{level} title={finding.code}::{_escape(f'{where}: {finding.message}')}")
    lines.append(f"::notice title=sitemap check::{_escape(report.summary())}")
    return "\n".join(lines)


def _escape(text: str) -> str:
    """A workflow command's message: %, CR and LF are encoded (GitHub's toolkit rule)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _line(finding: Finding, url_first: bool = False) -> str:
    where = f" <{finding.url}>" if finding.url else ""
    if url_first and finding.document and not finding.url:
        where = f" <{finding.document}>"
    return f"  {finding.severity.upper():7} {finding.code}: {finding.message}{where}"
