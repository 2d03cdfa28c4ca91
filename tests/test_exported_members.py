"""The public API: sorted __all__, every public name exported, nothing private leaking."""

from __future__ import annotations

import sitemap_middleware


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted and lists exactly the public names of the package."""
    exported = sitemap_middleware.__all__
    assert exported == sorted(exported)
    public = {name for name in dir(sitemap_middleware) if not name.startswith("_")}
    public -= {"annotations", "TYPE_CHECKING"}
    assert set(exported) - {"__version__", "SQLAlchemyProvider"} == public
    for name in exported:
        assert getattr(sitemap_middleware, name) is not None


def test_version_is_a_string() -> None:
    """__version__ is exposed for bug reports and ETag fingerprints."""
    assert isinstance(sitemap_middleware.__version__, str)
