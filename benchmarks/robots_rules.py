"""`check` against a hostile robots.txt: rule matching time, ours beside urllib's.

``python -m benchmarks.robots_rules [--rules N] [--urls N]`` builds a robots.txt of N
``Disallow`` rules (about 429 KiB at the default 20,000) and asks, for N listed URLs,
whether Googlebot may fetch them: with :class:`RobotsRules` (RFC 9309, prefix lookup)
and with ``urllib.robotparser`` (first match, every rule scanned per URL), which
``check`` used before (issue 30 item 6: 129 s for 20,000 URLs).
"""

from __future__ import annotations

import argparse
import time
from urllib.robotparser import RobotFileParser

from sitemap_middleware._sansio.robots_rules import RobotsRules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=20_000)
    parser.add_argument("--urls", type=int, default=20_000)
    args = parser.parse_args()
    text = "User-agent: *\n" + "".join(
        f"Disallow: /private/section-{i}/\n" for i in range(args.rules)
    )
    urls = [f"https://example.com/products/{i}?colour=red" for i in range(args.urls)]
    print(f"robots.txt: {len(text.encode()):,} bytes, {args.rules:,} rules; {len(urls):,} URLs")
    start = time.perf_counter()
    rules = RobotsRules(text, "Googlebot")
    ours = sum(rules.allowed(url) for url in urls)
    mine = time.perf_counter() - start
    print(f"RobotsRules:          {mine:8.3f} s ({ours:,} allowed)")
    sample = urls[: max(1, len(urls) // 100)]  # urllib is too slow for all of them
    start = time.perf_counter()
    old = RobotFileParser()
    old.parse(text.splitlines())
    theirs = sum(old.can_fetch("Googlebot", url) for url in sample)
    per_url = (time.perf_counter() - start) / len(sample)
    print(
        f"urllib.robotparser:   {per_url * len(urls):8.3f} s estimated from {len(sample):,} URLs "
        f"({theirs:,} of them allowed); ratio {per_url * len(urls) / mine:,.0f}x"
    )


if __name__ == "__main__":
    main()
