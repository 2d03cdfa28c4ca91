"""The official sitemap XSDs, compiled by lxml, for ``check --schemas DIR``.

The directory holds the files as published (``sitemap.xsd``, ``siteindex.xsd`` and the
image, video, news and xhtml extension schemas). The official urlset schema admits
extension elements with ``processContents="strict"``, so each extension validates only
when its schema is present: a missing one is reported, not silently skipped.
``xhtml1-strict.xsd`` imports W3C's ``xml.xsd`` over the network; never fetched here:
``xml.xsd`` from the same directory if present, else the four attribute declarations
it contributes (``xml:lang``, ``xml:space``, ``xml:base``, ``xml:id``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SCHEMAS_ENV", "Schemas", "load_schemas"]

SCHEMAS_ENV = "SITEMAP_SCHEMAS_DIR"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
EXTENSIONS = {
    "http://www.google.com/schemas/sitemap-image/1.1": "sitemap-image.xsd",
    "http://www.google.com/schemas/sitemap-video/1.1": "sitemap-video.xsd",
    "http://www.google.com/schemas/sitemap-news/0.9": "sitemap-news.xsd",
    "http://www.w3.org/1999/xhtml": "xhtml1-strict.xsd",
}
XML_XSD_URL = "http://www.w3.org/2001/xml.xsd"
_XML_XSD = b"""<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"
  targetNamespace="http://www.w3.org/XML/1998/namespace" xml:lang="en">
  <xs:attribute name="lang"><xs:simpleType><xs:union memberTypes="xs:language">
    <xs:simpleType><xs:restriction base="xs:string"><xs:enumeration value=""/>
    </xs:restriction></xs:simpleType></xs:union></xs:simpleType></xs:attribute>
  <xs:attribute name="space"><xs:simpleType><xs:restriction base="xs:NCName">
    <xs:enumeration value="default"/><xs:enumeration value="preserve"/>
  </xs:restriction></xs:simpleType></xs:attribute>
  <xs:attribute name="base" type="xs:anyURI"/>
  <xs:attribute name="id" type="xs:ID"/>
  <xs:attributeGroup name="specialAttrs"><xs:attribute ref="xml:base"/>
    <xs:attribute ref="xml:lang"/><xs:attribute ref="xml:space"/>
    <xs:attribute ref="xml:id"/></xs:attributeGroup>
</xs:schema>"""


@dataclass(frozen=True, slots=True)
class Schemas:
    """Compiled schemas for urlsets and indexes, and where they came from."""

    urlset: Any  # lxml.etree.XMLSchema (lxml ships no types)
    index: Any
    directory: Path
    missing: tuple[str, ...]

    def validate(self, tree: Any, limit: int = 20) -> list[str]:
        """Error messages (``line N: ...``) for a parsed document; empty when valid."""
        from lxml import etree

        schema = self.index if etree.QName(tree).localname == "sitemapindex" else self.urlset
        if schema.validate(tree):
            return []
        return [f"line {e.line}: {e.message}" for e in list(schema.error_log)[:limit]]


def load_schemas(directory: str | os.PathLike[str] | None) -> Schemas | None:
    """Compile the XSDs in ``directory`` (or ``$SITEMAP_SCHEMAS_DIR``); ``None`` if neither.

    Raises ``ValueError`` naming the directory when it lacks ``sitemap.xsd`` or
    ``siteindex.xsd``, or a schema does not compile.
    """
    from lxml import etree

    chosen = directory or os.environ.get(SCHEMAS_ENV)
    if not chosen:
        return None
    root = Path(chosen).resolve()
    for required in ("sitemap.xsd", "siteindex.xsd"):
        if not (root / required).is_file():
            raise ValueError(f"schemas directory {str(root)!r} has no {required}")
    present = {ns: root / name for ns, name in EXTENSIONS.items() if (root / name).is_file()}
    missing = tuple(name for ns, name in EXTENSIONS.items() if ns not in present)

    class OfflineXmlXsd(etree.Resolver):  # type: ignore[misc]
        def resolve(self, url: str | None, public_id: str | None, context: Any) -> Any:
            if url == XML_XSD_URL:
                local = root / "xml.xsd"
                if local.is_file():
                    return self.resolve_filename(str(local), context)
                return self.resolve_string(_XML_XSD, context)
            return None

    def compile_wrapper(imports: dict[str, Path]) -> Any:
        lines = "".join(
            f'<xs:import namespace="{ns}" schemaLocation="{path.as_uri()}"/>'
            for ns, path in imports.items()
        )
        wrapper = f'<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">{lines}</xs:schema>'
        parser = etree.XMLParser(no_network=True, resolve_entities=False)
        parser.resolvers.add(OfflineXmlXsd())
        try:
            return etree.XMLSchema(etree.fromstring(wrapper.encode(), parser))
        except (etree.XMLSchemaParseError, etree.XMLSyntaxError) as exc:
            raise ValueError(f"schemas in {str(root)!r} do not compile: {exc}") from None

    urlset = compile_wrapper({SITEMAP_NS: root / "sitemap.xsd", **present})
    index = compile_wrapper({SITEMAP_NS: root / "siteindex.xsd"})
    return Schemas(urlset, index, root, missing)
