"""Checking documents: sitemaps as a crawler parses them (and the official XSDs, whenever
``SITEMAP_SCHEMAS_DIR`` is set), ``<loc>`` URLs, and Atom and RSS feeds."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import feedparser
import pytest
import rnc2rng
import xmlschema
from lxml import etree
from usp.objects.sitemap import AbstractSitemap
from usp.tree import sitemap_from_str

SCHEMAS_ENV = "SITEMAP_SCHEMAS_DIR"
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
XML_XSD = Path(xmlschema.__file__).parent / "schemas" / "XML" / "xml.xsd"


#: Namespace -> schema file: the sitemap urlset and every extension it may carry.
URLSET_SCHEMAS = {
    "http://www.sitemaps.org/schemas/sitemap/0.9": "sitemap.xsd",
    "http://www.google.com/schemas/sitemap-image/1.1": "sitemap-image.xsd",
    "http://www.google.com/schemas/sitemap-video/1.1": "sitemap-video.xsd",
    "http://www.google.com/schemas/sitemap-news/0.9": "sitemap-news.xsd",
    "http://www.w3.org/1999/xhtml": "xhtml1-strict.xsd",
}
XML_XSD_URL = "http://www.w3.org/2001/xml.xsd"


class _OfflineXmlXsd(etree.Resolver):
    """xhtml1-strict.xsd imports xml.xsd from w3.org; use xmlschema's bundled copy."""

    def resolve(self, system_url: str | None, public_id: str | None, context: Any) -> Any:
        if system_url == XML_XSD_URL:
            return self.resolve_filename(str(XML_XSD), context)
        return None


def _schema(imports: dict[str, Path]) -> etree.XMLSchema:
    lines = [
        f'<xs:import namespace="{ns}" schemaLocation="{path.as_uri()}"/>'
        for ns, path in imports.items()
    ]
    wrapper = (
        '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">' + "".join(lines) + "</xs:schema>"
    )
    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(_OfflineXmlXsd())
    return etree.XMLSchema(etree.fromstring(wrapper.encode(), parser))


@cache
def _schemas() -> tuple[etree.XMLSchema, etree.XMLSchema] | None:
    """The official XSDs compiled by libxml2 (lxml): ~0.1 s for a 50,000-URL page."""
    directory = os.environ.get(SCHEMAS_ENV)
    if not directory:
        return None
    root = Path(directory).resolve()
    urlset = _schema({ns: root / name for ns, name in URLSET_SCHEMAS.items()})
    index = _schema({"http://www.sitemaps.org/schemas/sitemap/0.9": root / "siteindex.xsd"})
    return urlset, index


def require_schemas() -> None:
    """Skip the calling test when the official XSDs are not available."""
    if _schemas() is None:
        pytest.skip(
            f"{SCHEMAS_ENV} is not set: official sitemap XSDs unavailable (.ci/run sets it)"
        )


def check_document(body: bytes) -> AbstractSitemap:
    """Parse ``body`` as a crawler would (ultimate-sitemap-parser) and validate it.

    XSD validation runs whenever SITEMAP_SCHEMAS_DIR is set (always under .ci/run).
    Returns usp's parsed sitemap.
    """
    text = body.decode("utf-8")
    schemas = _schemas()
    if schemas is not None:
        urlset, index = schemas
        schema = index if "<sitemapindex" in text[:400] else urlset
        schema.assertValid(etree.fromstring(body))
    parsed = sitemap_from_str(text)
    assert type(parsed).__name__ in ("PagesXMLSitemap", "IndexXMLSitemap"), parsed
    return parsed


def page_urls(parsed: AbstractSitemap) -> list[str]:
    return [page.url for page in parsed.all_pages()]


def child_urls(parsed: AbstractSitemap) -> list[str]:
    return [child.url for child in getattr(parsed, "sub_sitemaps", [])]


#: An absolute http(s) URL as RFC 3986 writes it: only the characters a URI holds,
#: well-formed escapes, and at most one "#" (the fragment's delimiter).
_URI_PART = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*"
RFC3986_URL = re.compile(rf"https?://[^/?#\s]+/{_URI_PART}(?:#{_URI_PART})?")


def check_locs(urls: list[str]) -> None:
    """Each URL is a valid ``<loc>``: RFC 3986 (always) and the sitemap XSD's ``tLoc``
    (``xs:anyURI``, whenever SITEMAP_SCHEMAS_DIR is set)."""
    from sitemap_middleware._sansio.xml import escape_loc

    for url in urls:
        assert RFC3986_URL.fullmatch(url), url
    schemas = _schemas()
    if schemas is not None and urls:
        lines = "".join(f"<url><loc>{escape_loc(url)}</loc></url>" for url in urls)
        document = f'<urlset xmlns="{SITEMAP_NS[1:-1]}">{lines}</urlset>'
        schemas[0].assertValid(etree.fromstring(document.encode()))


ATOM = "{http://www.w3.org/2005/Atom}"
#: RFC 4287 Appendix B's RELAX NG schema, in its compact syntax.
ATOM_RNC = Path(__file__).resolve().parents[1] / "data" / "atom.rnc"


@cache
def atom_schema() -> etree.RelaxNG:
    """RFC 4287's schema (tests/data/atom.rnc), made XML by rnc2rng.

    rnc2rng declares ``xmlns:local=""``, which XML namespaces forbid; nothing uses the
    prefix once converted (``local:*`` becomes ``<nsName ns=""/>``), so it is dropped.
    """
    rng = rnc2rng.dumps(rnc2rng.loads(ATOM_RNC.read_text()))
    rng = re.sub(r'\s+xmlns:local=""', "", rng)
    return etree.RelaxNG(etree.fromstring(rng.encode()))


def check_atom(body: bytes) -> etree._Element:
    """Valid against RFC 4287's schema, its Schematron rules, and to feedparser."""
    root = etree.fromstring(body)
    schema = atom_schema()
    assert schema.validate(root), schema.error_log
    # RFC 4287 4.1.1: an author on the feed or on every entry; 4.1.2: an entry has an
    # alternate link or content; 4.1.1: at most one alternate link per type/hreflang.
    entries = root.findall(f"{ATOM}entry")
    assert root.find(f"{ATOM}author") is not None or all(
        entry.find(f"{ATOM}author") is not None for entry in entries
    )
    for entry in entries:
        links = [
            link
            for link in entry.findall(f"{ATOM}link")
            if link.get("rel", "alternate") == "alternate"
        ]
        assert len(links) == 1 or entry.find(f"{ATOM}content") is not None
    assert len(root.findall(f"{ATOM}id")) == 1 and len(root.findall(f"{ATOM}updated")) == 1
    parsed = feedparser.parse(body)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    return root


def check_rss(body: bytes) -> Any:
    parsed = feedparser.parse(body)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "rss20"
    return parsed
