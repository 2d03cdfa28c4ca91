"""The engine tests' wall clock: ``clock`` replaces the shared stores' clock."""

from __future__ import annotations

import pytest

from sitemap_middleware._engine import shared
from tests.harness.core import Clock


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(shared, "wall_clock", fake)
    return fake
