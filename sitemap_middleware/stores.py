"""Stores: where rendered documents, plans and small values are kept between requests.

``Renders(store=...)`` takes a :class:`RenderStore`: :class:`MemoryRenderStore` (in
process, the default) or :class:`RedisRenderStore` (the ``redis`` extra: shared by a
fleet). A store may also implement :class:`PlanStore` (section plans a fleet shares),
:class:`ValueStore` (the guard's verdicts) and :class:`LedgerStore` (the content
ledger's records): :class:`RedisRenderStore` implements all three,
:class:`MemoryRenderStore` :class:`ValueStore`.

``Renders(etag="content")`` keeps ETags learnt from rendered bytes in the same store.
"""

from __future__ import annotations

from ._caches.redis_store import RedisRenderStore
from ._caches.store import (
    LedgerStore,
    MemoryRenderStore,
    PlanStore,
    RenderMeta,
    RenderStore,
    StoredBodyError,
    ValueStore,
)
from ._public import publish as _publish

__all__ = [
    "LedgerStore",
    "MemoryRenderStore",
    "PlanStore",
    "RedisRenderStore",
    "RenderMeta",
    "RenderStore",
    "StoredBodyError",
    "ValueStore",
]

_publish(globals(), __all__)
