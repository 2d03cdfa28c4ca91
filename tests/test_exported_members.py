"""The public API: each public module's ``__all__`` as written down here, every name in it
resolving, documented and naming its public module, and each name in one public place.

The rule: the top level holds what a configuration is written with (middlewares,
``SitemapConfig`` and its values, entries and their extensions, the errors the middleware
raises); ``providers``, ``stores`` and ``ops`` hold the rest; ``django`` the Django
integration. No name is exported from two public modules: the top-level names are not
re-exported by the others, nor the others' by each other.
"""

from __future__ import annotations

import importlib
import inspect
import types
from importlib.util import find_spec

import pytest

import sitemap_middleware

TOP_LEVEL = [
    "ASGISitemapMiddleware",
    "Alternate",
    "Changes",
    "ConfigurationError",
    "Feed",
    "Guard",
    "HTMLView",
    "HTTPSettings",
    "Image",
    "InvalidEntryError",
    "Languages",
    "Ledger",
    "LlmsTxt",
    "NewsArticle",
    "ProviderError",
    "ProviderTimeoutError",
    "Renders",
    "Robots",
    "RobotsGroup",
    "SKIP",
    "Section",
    "SitemapConfig",
    "SitemapEntry",
    "SitemapError",
    "SitemapLimitError",
    "Tenants",
    "TrustedHosts",
    "Video",
    "WSGISitemapMiddleware",
    "__version__",
]

PROVIDERS = [
    "CallableProvider",
    "DirectoryProvider",
    "FlaskRoutesProvider",
    "KeyRange",
    "Mapped",
    "ProviderVersion",
    "RangeStats",
    "SQLAlchemyProvider",
    "StarletteRoutesProvider",
    "StaticProvider",
    "SupportsCount",
    "SupportsKeyedBatches",
    "SupportsKeyset",
    "SupportsPageLastModified",
    "SupportsPages",
    "SupportsRangeStats",
    "SupportsRangeVersion",
    "SupportsVersion",
    "TextFileProvider",
    "UrlProvider",
    "as_provider",
    "news_cutoff",
]

STORES = [
    "LedgerStore",
    "MemoryRenderStore",
    "PlanStore",
    "RedisRenderStore",
    "RenderMeta",
    "RenderStore",
    "StoredBodyError",
    "ValueStore",
]

OPS = [
    "DocumentObserver",
    "ExportPathError",
    "IndexNowBatch",
    "IndexNowNotifier",
    "IndexNowResult",
    "ParsedSitemap",
    "PrometheusObserver",
    "SQLAlchemyPush",
    "ServedDocument",
    "SitemapParseError",
    "Snapshot",
    "changed_urls",
    "notify_on_commit",
    "parse_sitemap",
    "take_snapshot",
]

DJANGO = [
    "DjangoQuerySetProvider",
    "DjangoRoutesProvider",
    "DjangoSitemapProvider",
    "IndexNowPush",
    "django_sections",
    "django_trusted_hosts",
    "find_sitemaps",
    "notify_on_change",
    "settings_config",
    "site_base_url",
    "sitemap_config",
]

PUBLIC = {
    "sitemap_middleware": TOP_LEVEL,
    "sitemap_middleware.providers": PROVIDERS,
    "sitemap_middleware.stores": STORES,
    "sitemap_middleware.ops": OPS,
    "sitemap_middleware.django": DJANGO,
}

#: Names imported when first asked for (their module needs an extra).
LAZY = {"sitemap_middleware.providers": {"SQLAlchemyProvider"}}


def _module(name: str) -> types.ModuleType:
    if name == "sitemap_middleware.django" and find_spec("django") is None:
        pytest.skip("needs the django extra")
    return importlib.import_module(name)


@pytest.mark.parametrize("name", list(PUBLIC))
def test_all_is_the_expected_list(name: str) -> None:
    """``__all__`` is sorted and lists exactly the names written above."""
    module = _module(name)
    assert module.__all__ == PUBLIC[name]
    assert module.__all__ == sorted(module.__all__)


@pytest.mark.parametrize("name", [each for each in PUBLIC if each != "sitemap_middleware.django"])
def test_no_public_name_outside_all(name: str) -> None:
    """Every attribute without an underscore (submodules aside) is in ``__all__``: the
    re-exporting modules import their helpers under private names. (The django module
    holds code of its own and the names it needs.)"""
    module = _module(name)
    public = {
        each
        for each in vars(module)
        if not each.startswith("_")
        and not isinstance(getattr(module, each), types.ModuleType)
        and each not in {"annotations", "TYPE_CHECKING"}
    }
    assert public - set(module.__all__) == set()


@pytest.mark.parametrize("name", list(PUBLIC))
def test_every_name_resolves_is_documented_and_names_its_module(name: str) -> None:
    """Each name resolves (lazy ones included), has a docstring, and a class or function
    says it comes from this public module (reprs, docs and pickles show that path)."""
    module = _module(name)
    for each in module.__all__:
        if each == "__version__":
            assert isinstance(module.__version__, str)
            continue
        if each in LAZY.get(name, set()) and find_spec("sqlalchemy") is None:
            continue
        value = getattr(module, each)
        assert value is not None, each
        assert (inspect.getdoc(value) or "").strip(), f"{name}.{each} has no docstring"
        if isinstance(value, type) or inspect.isfunction(value):
            assert value.__module__ == name, each


@pytest.mark.parametrize("name", list(PUBLIC))
def test_each_public_module_says_what_it_holds(name: str) -> None:
    assert (_module(name).__doc__ or "").strip()


def test_the_top_level_is_small() -> None:
    """At most 30 names besides ``__version__``: the rest lives in the public modules."""
    assert len(set(sitemap_middleware.__all__) - {"__version__"}) <= 30


def test_no_name_has_two_public_homes() -> None:
    """Each public name is exported from one public module only."""
    seen: dict[str, str] = {}
    for module, names in PUBLIC.items():
        for each in names:
            assert each not in seen, f"{each} is exported by {seen[each]} and {module}"
            seen[each] = module


def test_the_public_modules_are_imported_with_the_package() -> None:
    """So each name names its public module in every process, whatever is imported first."""
    for name in ("providers", "stores", "ops"):
        assert isinstance(getattr(sitemap_middleware, name), types.ModuleType)


def test_version_is_a_string() -> None:
    """__version__ is exposed for bug reports and ETag fingerprints."""
    assert isinstance(sitemap_middleware.__version__, str)
