"""Where resume bytes live, addressed by their sha256: the storage interface, the local-directory one, the app's."""

from __future__ import annotations

import abc
import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import BinaryIO

from flask import current_app


class ResumeStorage(abc.ABC):
    """Where resume bytes live, addressed by their sha256 (the same bytes are stored once)."""

    @abc.abstractmethod
    def save(self, data: bytes) -> str:
        """Store the bytes and return their sha256 hex digest."""

    @abc.abstractmethod
    def open(self, sha256: str) -> BinaryIO:
        """A readable binary stream of the stored bytes; FileNotFoundError when absent."""


class LocalResumeStorage(ResumeStorage):
    """A directory on local disk: <root>/<first two hex digits>/<sha256>, written atomically."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path_for(self, sha256: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", sha256 or ""):
            raise FileNotFoundError(sha256)
        return self.root / sha256[:2] / sha256

    def save(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_for(digest)
        if path.exists():
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return digest

    def open(self, sha256: str) -> BinaryIO:
        return self.path_for(sha256).open("rb")


def storage() -> ResumeStorage:
    """The app's resume storage (a local directory at RESUME_DIR unless a test or deployment installed another)."""
    extensions = current_app.extensions
    if "hirekit_resume_storage" not in extensions:
        extensions["hirekit_resume_storage"] = LocalResumeStorage(current_app.config["RESUME_DIR"])
    return extensions["hirekit_resume_storage"]
