"""The key column's uniqueness by schema: trusted only where no join can repeat it."""

from __future__ import annotations

from sqlalchemy import Column, Integer, MetaData, String, Table, select

from sitemap_middleware._providers.sql_keys import key_problem, unique_by_schema

metadata = MetaData()
products = Table(
    "products", metadata, Column("id", Integer, primary_key=True), Column("slug", String)
)
tags = Table(
    "tags", metadata, Column("id", Integer, primary_key=True), Column("product_id", Integer)
)
pairs = Table(
    "pairs",
    metadata,
    Column("a", Integer, primary_key=True),
    Column("b", Integer, primary_key=True),
)


def _key(source: object, name: str) -> object:
    query = source if not isinstance(source, Table) else select(source)
    return query.subquery().c[name]  # type: ignore[attr-defined]


def test_the_primary_key_of_the_one_table_read_is_unique() -> None:
    assert unique_by_schema(products, _key(products, "id"))  # type: ignore[arg-type]
    filtered = select(products).where(products.c.slug != "")
    assert unique_by_schema(filtered, _key(filtered, "id"))  # type: ignore[arg-type]


def test_a_join_a_column_or_half_a_composite_key_is_counted_instead() -> None:
    joined = select(products).join(tags, tags.c.product_id == products.c.id)
    assert not unique_by_schema(joined, _key(joined, "id"))  # type: ignore[arg-type]
    assert not unique_by_schema(products, _key(products, "slug"))  # type: ignore[arg-type]
    assert not unique_by_schema(pairs, _key(pairs, "a"))  # type: ignore[arg-type]


def test_key_problems_found_while_reading() -> None:
    assert key_problem([1, 2, 3], None) == ""
    assert key_problem([1, None], None) == "holds NULL"
    assert "(3 appears more than once)" in key_problem([3, 4], 3)
