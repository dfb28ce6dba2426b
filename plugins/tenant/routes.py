"""GET /v1/tenant: the caller's tenant, so a client can learn its tenant id (webhook bodies need it)
and its limit."""

from __future__ import annotations

import marshmallow as ma
from flask import current_app
from flask.views import MethodView

from app.http.api import Blueprint
from app.security.auth import current_tenant_id
from app.errors import NotFound
from app.data.tenancy import Tenant

blp = Blueprint("tenant", __name__, url_prefix="/v1/tenant", description="The calling tenant")


class TenantSchema(ma.Schema):
    id = ma.fields.String(
        required=True,
        metadata={"description": "The tenant id (its slug); tenant_id in webhook bodies"},
    )
    name = ma.fields.String(required=True)
    rate_limit = ma.fields.String(
        required=True,
        metadata={
            "description": "The limit that applies to this tenant's keys",
            "example": "600/minute",
        },
    )
    candidate_retention_days = ma.fields.Integer(
        required=True,
        allow_none=True,
        metadata={
            "description": "Candidates with no activity (no write to them, their applications or "
            "calls) for longer than "
            "this many days are erased by the server; null: kept until erased. Set by the operator "
            "(`flask tenants update --candidate-retention-days`)"
        },
    )


@blp.route("")
class CurrentTenant(MethodView):
    @blp.response(200, TenantSchema)
    @blp.doc(operationId="get_current_tenant")
    def get(self):
        """The tenant of the calling key"""
        tenant = Tenant.get_or_none(Tenant.id == current_tenant_id())
        if tenant is None:  # deleted while a cached key still pointed at it
            raise NotFound("tenant")
        return {
            "id": tenant.id,
            "name": tenant.name,
            "rate_limit": tenant.rate_limit or current_app.config["RATE_LIMIT"],
            "candidate_retention_days": tenant.candidate_retention_days,
        }
