"""Where this checkout keeps its state (database, resumes, search index, secret): read before the
configuration, by the configuration's defaults and the families' settings."""

from __future__ import annotations

import os
from pathlib import Path

INSTANCE_DIR = Path(
    os.environ.get("HIREKIT_INSTANCE_DIR", Path(__file__).resolve().parent.parent / "instance")
)
