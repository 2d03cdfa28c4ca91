"""``check`` for a person: a line per document on stderr as each is judged (with a rich
bar under them on a terminal), colour only where it is read on a terminal, and the
summary table closing the text report.

Colour: never with ``--json`` or ``--github`` or when ``NO_COLOR`` is set (no-color.org);
always when ``FORCE_COLOR`` is set (and not ``0``); otherwise only on a terminal that is
not ``TERM=dumb``. Plain ANSI codes: the report is ours to write, and rich (the bar,
already in the ``cli`` extra) would read its ``[...]`` as markup.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TextIO

from .check import Progress
from .findings import CheckReport, DocumentReport, Severity
from .rules import origin_of

__all__ = ["DocumentLines", "Paint", "colour_report", "summary_table", "use_colour"]

_CODES = {"red": "31", "green": "32", "yellow": "33", "cyan": "36", "bold": "1", "dim": "2"}
#: Listed URLs fetched without a bar: a line at each tenth when there are this many.
URL_LINES_FROM = 1_000
_KINDS = {"robots": "robots.txt", "sitemapindex": "index", "unknown": "unread"}


def use_colour(
    stream: TextIO, *, plain: bool = False, environ: Mapping[str, str] | None = None
) -> bool:
    """Whether to colour what is written to ``stream`` (see the module's docstring)."""
    env = os.environ if environ is None else environ
    if plain or env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty()) and env.get("TERM") != "dumb"


@dataclass(frozen=True, slots=True)
class Paint:
    """ANSI colour when ``on``, the text as it is otherwise."""

    on: bool

    def __call__(self, text: str, *colours: str) -> str:
        if not self.on or not colours:
            return text
        codes = ";".join(_CODES[c] for c in colours)
        return f"\x1b[{codes}m{text}\x1b[0m"


def _marks(stream: TextIO) -> tuple[str, str, str, str]:
    """(ok, failed, warned, ellipsis) in what the stream can encode."""
    try:
        "✓✗!…".encode(getattr(stream, "encoding", None) or "utf-8")  # StringIO: None
    except (UnicodeEncodeError, LookupError):
        return "ok", "FAIL", "warn", "..."
    return "✓", "✗", "!", "…"


class DocumentLines(Progress):
    """Writes a line to ``stream`` as each document is judged and when the listed URLs'
    GETs begin; with ``bar`` (a terminal) a transient rich bar under them counts the
    steps, without one a line at each tenth of many listed URLs."""

    def __init__(self, stream: TextIO, start: str, paint: Paint, bar: bool = False) -> None:
        self.stream = stream
        self.origin = origin_of(start)
        self.paint = paint
        self.marks = _marks(stream)
        self.urls = self.urls_done = 0
        self.bar: Any = None
        if bar:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(
                TextColumn("checking"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=stream),
                transient=True,
            )
            self.task = self.bar.add_task("check", total=0)

    def __enter__(self) -> DocumentLines:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.stop()

    def add_total(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, total=(self.bar.tasks[0].total or 0) + n)

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)
            return
        if not self.urls:
            return
        self.urls_done += 1
        tenth = self.urls // 10
        if self.urls >= URL_LINES_FROM and self.urls_done % tenth == 0:
            self._write(f"  fetched {self.urls_done:,} of {self.urls:,} listed URLs")

    def listed_urls(self, total: int) -> None:
        self.urls, self.urls_done = total, 0
        if total:
            self._write(f"fetching {total:,} listed URLs{self.marks[3]}")

    def document(self, report: DocumentReport) -> None:
        ok, failed, warned, _ = self.marks
        errors, warnings = report.findings.count("error"), report.findings.count("warning")
        mark = (
            self.paint(failed, "red")
            if errors
            else self.paint(warned, "yellow")
            if warnings
            else self.paint(ok, "green")
        )
        name = report.url
        if origin_of(name) == self.origin:
            name = name[len(self.origin) :] or "/"
        said = [_what(report)]
        for severity, number, colour in (("error", errors, "red"), ("warning", warnings, "yellow")):
            if number:
                codes = ", ".join(
                    sorted({code for code, s in report.findings.counts if s == severity})
                )
                plural = "" if number == 1 else "s"
                said.append(self.paint(f"{number:,} {severity}{plural} ({codes})", colour))
        self._write(f"{mark} {name}  {', '.join(said)}")

    def _write(self, line: str) -> None:
        if self.bar is not None:
            from rich.text import Text

            self.bar.console.print(Text.from_ansi(line), soft_wrap=True, highlight=False)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()


def _what(report: DocumentReport) -> str:
    """What a document turned out to be, in a few words."""
    if report.status == 0:
        return "no answer"
    if report.status != 200:
        return f"HTTP {report.status}"
    if report.kind == "robots":
        return f"robots.txt, {_count(report.entries, 'Sitemap: line')}"
    if report.kind == "sitemapindex":
        what = f"index of {_count(report.entries, 'sitemap')}"
    elif report.kind == "unknown":
        what = "not a sitemap"
    else:
        what = f"{report.kind}, {_count(report.entries, 'URL')}"
    return f"{what}, {_size(report.bytes)}"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size:,} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def _by_severity(report: CheckReport) -> dict[Severity, Counter[str]]:
    found: dict[Severity, Counter[str]] = {
        "error": Counter(),
        "warning": Counter(),
        "info": Counter(),
    }
    for findings in [report.site, *(d.findings for d in report.documents)]:
        for (code, severity), number in findings.counts.items():
            found[severity][code] += number
    return found


def summary_table(report: CheckReport, seconds: float, paint: Paint) -> list[str]:
    """The table closing the text report: documents, URLs, findings by severity, time."""
    kinds = Counter(_KINDS.get(d.kind, d.kind) for d in report.documents)
    found = _by_severity(report)
    rows = [
        ("documents", len(report.documents), ", ".join(f"{k} {n:,}" for k, n in kinds.items())),
        ("URLs listed", report.urls, ""),
        ("URLs fetched", report.urls_checked, ""),
        ("errors", sum(found["error"].values()), _codes(found["error"])),
        ("warnings", sum(found["warning"].values()), _codes(found["warning"])),
    ]
    if found["info"]:
        rows.append(("info", sum(found["info"].values()), _codes(found["info"])))
    rows.append(("requests", report.requests, ""))
    width = max(len(f"{n:,}") for _, n, _ in rows)
    colours = {"errors": "red", "warnings": "yellow"}
    lines = [paint("summary", "bold")]
    for name, number, detail in rows:
        line = f"  {name:<14}{number:>{width},}" + (f"  {detail}" if detail else "")
        lines.append(paint(line, colours[name]) if number and name in colours else line)
    lines.append(f"  {'time':<14}{_duration(seconds)}")
    return lines


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _codes(counts: Counter[str]) -> str:
    shown = ", ".join(f"{code} {n:,}" for code, n in counts.most_common(4))
    return shown + (", ..." if len(counts) > 4 else "")


_SEVERITY = re.compile(r"^  (ERROR|WARNING|INFO)(?= )")
_COLOURS = {"ERROR": "red", "WARNING": "yellow", "INFO": "cyan"}


def colour_report(text: str, paint: Paint) -> str:
    """``CheckReport.format_text`` with its severities and verdict coloured."""
    if not paint.on:
        return text
    lines = []
    for line in text.split("\n"):
        if match := _SEVERITY.match(line):
            word = match.group(1)
            line = "  " + paint(word, _COLOURS[word]) + line[2 + len(word) :]
        elif line.startswith(("OK: ", "FAILED: ")):
            verdict, rest = line.split(":", 1)
            line = paint(verdict, "green" if verdict == "OK" else "red", "bold") + ":" + rest
        elif line.startswith("note: "):
            line = paint(line, "dim")
        elif line.startswith(("http://", "https://")):
            url, _, rest = line.partition("  ")
            line = paint(url, "bold") + "  " + rest
        lines.append(line)
    return "\n".join(lines)
