"""Where resume bytes live: each tenant's files apart, addressed by (tenant, sha256), so the same
bytes are stored once per tenant and no tenant's upload can tell, by how long it takes, whether
another tenant holds the same file."""

from __future__ import annotations

import abc
import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import BinaryIO

from flask import current_app

from app.data.tenancy import SLUG_PATTERN

SHA256_HEX = re.compile(r"[0-9a-f]{64}")
# <root>/tenants/<tenant id>/...; beside it, the shared two-hex-digit directories of old
TENANTS_DIRECTORY = "tenants"


class ResumeStorage(abc.ABC):
    """Where resume bytes live, addressed by tenant and sha256 (a tenant's same bytes are stored
    once)."""

    @abc.abstractmethod
    def save(self, tenant_id: str, data: bytes) -> str:
        """Store the tenant's bytes and return their sha256 hex digest."""

    @abc.abstractmethod
    def open(self, tenant_id: str, sha256: str) -> BinaryIO:
        """A readable binary stream of the tenant's stored bytes; FileNotFoundError when absent."""

    @abc.abstractmethod
    def remove(self, tenant_id: str, sha256: str, *, shared_too: bool) -> bool:
        """Delete the tenant's stored bytes (and, with `shared_too`, a copy stored before tenants
        were kept apart); answers whether anything was deleted. Callers check first that no record
        refers to them."""


class LocalResumeStorage(ResumeStorage):
    """A directory on local disk: <root>/tenants/<tenant id>/<first two hex digits>/<sha256>,
    written atomically.

    Files stored before tenants were kept apart sit at <root>/<first two hex digits>/<sha256>,
    shared by every tenant whose records name that sha256: reading falls back to there, so they stay
    readable where they are, while saving only ever looks at (and writes) the tenant's own
    directory."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path_for(self, tenant_id: str, sha256: str) -> Path:
        return self._tenant_root(tenant_id) / _two_level(sha256)

    def shared_path_for(self, sha256: str) -> Path:
        """Where the file was stored before each tenant had its own directory."""
        return self.root / _two_level(sha256)

    def _tenant_root(self, tenant_id: str) -> Path:
        # a tenant id is a slug: never a path of its own
        if not SLUG_PATTERN.match(tenant_id or ""):
            raise ValueError(f"not a tenant id: {tenant_id!r}")
        return self.root / TENANTS_DIRECTORY / tenant_id

    def save(self, tenant_id: str, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_for(tenant_id, digest)
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

    def open(self, tenant_id: str, sha256: str) -> BinaryIO:
        try:
            return self.path_for(tenant_id, sha256).open("rb")
        except FileNotFoundError:
            return self.shared_path_for(sha256).open("rb")

    def remove(self, tenant_id: str, sha256: str, *, shared_too: bool) -> bool:
        paths = [self.path_for(tenant_id, sha256)] + (
            [self.shared_path_for(sha256)] if shared_too else []
        )
        removed = False
        for path in paths:
            try:
                path.unlink()
                removed = True
            except FileNotFoundError:
                pass
        return removed


def _two_level(sha256: str) -> Path:
    """<first two hex digits>/<sha256>; FileNotFoundError for anything that is not a sha256 hex
    digest."""
    if not SHA256_HEX.fullmatch(sha256 or ""):
        raise FileNotFoundError(sha256)
    return Path(sha256[:2]) / sha256


def storage() -> ResumeStorage:
    """The app's resume storage (a local directory at RESUME_DIR unless a test or deployment
    installed another)."""
    extensions = current_app.extensions
    if "hirekit_resume_storage" not in extensions:
        extensions["hirekit_resume_storage"] = LocalResumeStorage(current_app.config["RESUME_DIR"])
    return extensions["hirekit_resume_storage"]
