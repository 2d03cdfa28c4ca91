"""Snapshots of what a site lists, kept between runs (a cron job's `notify`) as JSON."""

from __future__ import annotations

import logging

import anyio
import pytest

from sitemap_middleware import SitemapConfig
from sitemap_middleware.ops import take_snapshot


def test_snapshot_round_trips_through_json() -> None:
    """Snapshots can be kept between runs (a cron job) as JSON; junk is refused clearly."""
    from sitemap_middleware.ops import Snapshot

    config = SitemapConfig(base_url="https://example.com", sections={"p": ["/", "/a"]})
    snapshot = anyio.run(take_snapshot, config)
    assert Snapshot.from_json(snapshot.to_json()) == snapshot
    with pytest.raises(ValueError, match="not a sitemap snapshot"):
        Snapshot.from_json('{"p": 3}')
    logging.getLogger(__name__).debug("ok")
