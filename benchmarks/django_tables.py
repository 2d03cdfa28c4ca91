"""The README's Django tables from runs of ``benchmarks/django_bench.py`` (``--table``)."""

from __future__ import annotations

from typing import Any

__all__ = ["markdown"]


def _page_cell(row: dict[str, Any]) -> str:
    """A page's time (first request, then the median of the next ones when they differ:
    ours keeps its render), and its traced peak."""
    then = f"{row['seconds'] * 1000:,.0f} ms"
    if "first_seconds" in row and "ours" in row["case"]:
        then = f"first {row['first_seconds'] * 1000:,.0f} ms, then {then}"
    return f"{then}, {row['traced_peak_kib']:,} KiB"


def markdown(runs: list[dict[str, Any]]) -> str:
    """The README's Django tables from runs of this benchmark (one per database)."""
    names = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
    head = " | ".join(names[run["database"]] for run in runs)
    lines = [
        f"| first index, {runs[0]['rows']:,} rows | {head} |",
        "| --- |" + " --- |" * len(runs),
    ]
    cases = [c["case"] for c in runs[0]["cases"] if "x_django_in_round" in c]
    for case in cases:
        cells = []
        for run in runs:
            row = next(c for c in run["cases"] if c["case"] == case)
            ratio = row["x_django_in_round"]
            cells.append(f"{row['seconds']:,.2f} s ({ratio:.2f}x Django)")
        lines.append(f"| {case} | {' | '.join(cells)} |")
    lines += ["", f"| page of {runs[0]['page_size']:,} URLs | {head} |"]
    lines.append("| --- |" + " --- |" * len(runs))
    pages = [(c["document"], c["case"]) for c in runs[0]["cases"] if c["document"] != "index"]
    for document, case in pages:
        cells = []
        for run in runs:
            found = [c for c in run["cases"] if (c["document"], c["case"]) == (document, case)]
            cells.extend(_page_cell(row) for row in found)
            cells += ["(not run)"] * (not found)
        lines.append(f"| {document}: {case} | {' | '.join(cells)} |")
    return "\n".join(lines)
