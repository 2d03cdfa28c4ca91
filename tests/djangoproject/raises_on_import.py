"""A module whose import fails with something other than ImportError (checks tests)."""

from __future__ import annotations

raise RuntimeError("this module breaks at import")
