"""llms.txt (llmstxt.org): ``# title``, ``> summary``, ``## heading`` lists of links.

Markdown link text escapes ``\\``, ``[``, ``]``, ``<``, ``>`` and backticks (an
autolink such as ``<javascript:...>`` or raw HTML in a title would otherwise become a
link or markup of its own); URLs are already percent-encoded
(normalised locs never hold spaces or parentheses that would end the link: ``(`` and
``)`` are escaped too, to be safe). Line breaks in titles become spaces.
"""

from __future__ import annotations

__all__ = ["LLMS_TYPE", "llms_head", "llms_heading", "llms_link"]

LLMS_TYPE = "text/markdown; charset=utf-8"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _link_text(text: str) -> str:
    text = _one_line(text)
    for char in "\\[]<>`":
        text = text.replace(char, "\\" + char)
    return text


def llms_head(title: str, summary: str | None) -> str:
    """The title line and the optional summary blockquote."""
    head = f"# {_one_line(title)}\n"
    if summary:
        head += f"\n> {_one_line(summary)}\n"
    return head


def llms_heading(heading: str) -> str:
    return f"\n## {_one_line(heading)}\n\n"


def llms_link(title: str, url: str) -> str:
    """``- [title](url)``: one listed page."""
    url = url.replace("(", "%28").replace(")", "%29")
    return f"- [{_link_text(title)}]({url})\n"
