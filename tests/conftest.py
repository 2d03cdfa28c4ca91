from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run async tests on asyncio and on trio: the core claims both."""
    return str(request.param)
