"""The public API: sorted __all__, every public name exported, nothing private leaking."""

from __future__ import annotations

import types

import sitemap_middleware


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted and lists exactly the public names of the package."""
    exported = sitemap_middleware.__all__
    assert exported == sorted(exported)
    public = {
        name
        for name in dir(sitemap_middleware)
        if not name.startswith("_")
        # submodules (sitemap_middleware.django) appear once imported; they are not names
        and not isinstance(getattr(sitemap_middleware, name), types.ModuleType)
    }
    public -= {"annotations", "TYPE_CHECKING"}
    lazy = {
        "__version__",
        "SQLAlchemyProvider",
        "DjangoQuerySetProvider",
        "DjangoRoutesProvider",
        "DjangoSitemapProvider",
    }
    assert set(exported) - lazy == public
    for name in exported:
        assert getattr(sitemap_middleware, name) is not None


def test_version_is_a_string() -> None:
    """__version__ is exposed for bug reports and ETag fingerprints."""
    assert isinstance(sitemap_middleware.__version__, str)
