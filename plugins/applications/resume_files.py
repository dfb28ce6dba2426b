"""Resume bytes nobody refers to any more are deleted: after an erasure, when a write that stored
them failed or was refused, and when a write replaced them by another resume."""

from __future__ import annotations

import contextlib

from app.data.db import after_commit
from app.files.storage import storage
from plugins.applications.models import Application
from plugins.candidates.models import Candidate

# the tables whose rows name a stored resume by its sha256 (ResumeColumns)
HOLDERS = (Candidate, Application)


def remove_unreferenced(tenant_id: str, sha256s) -> int:
    """Delete each of the tenant's stored resumes that no record of the tenant names any more (a
    copy stored before tenants were kept apart goes too once no record of any tenant names it);
    answers how many files went."""
    removed = 0
    for sha256 in sorted({sha for sha in sha256s if sha}):
        if _named(sha256, tenant_id):
            continue
        removed += storage().remove(tenant_id, sha256, shared_too=not _named(sha256))
    return removed


@contextlib.contextmanager
def resume_kept_by(tenant_id: str, columns: dict, replaced_sha256: str | None = None):
    """Around the write of a record with the resume columns `columns`
    (app.files.uploads.take_from's, whose file is already stored): if the write fails or is refused,
    the new file goes unless another record names it; once it commits, the resume it replaced
    (`replaced_sha256`) goes unless another record still names it."""
    stored = columns.get("resume_sha256")
    try:
        yield
    except BaseException:
        if stored:
            remove_unreferenced(tenant_id, [stored])
        raise
    if stored and replaced_sha256 and replaced_sha256 != stored:
        after_commit(lambda: remove_unreferenced(tenant_id, [replaced_sha256]))


def _named(sha256: str, tenant_id: str | None = None) -> bool:
    for model in HOLDERS:
        query = model.select(model.id).where(model.resume_sha256 == sha256)
        if tenant_id is not None:
            query = query.where(model.tenant == tenant_id)
        if query.exists():
            return True
    return False
