"""The candidate's page, /c/<token>: HTML rendered by the server, usable without JavaScript; GET
shows the call and the actions, POST does one (protected by a CSRF cookie and the form's value
derived from it), then redirects to the page under the link's replacement. A link that opens nothing
shows the same plain page whatever the reason."""

from __future__ import annotations

import secrets

import marshmallow as ma
from flask import Response, make_response, redirect, render_template, request
from flask.views import MethodView

from app.data.db import database
from app.http.api import Blueprint
from plugins.calls import candidate_page, page_links

CSRF_COOKIE = "hk_csrf"
DONE_PARAMETER = "done"
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",  # the link is the key: never sent on to another site
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
}

UNAVAILABLE = "The plain page of a forged, expired or used link, or a call no longer queued (HTML)"

page_blp = Blueprint(
    "candidate_page",
    __name__,
    url_prefix="/c",
    auth=None,
    template_folder="templates",
    description="The candidate's own page for a scheduled call (HTML; the link is its key)",
)


class PageFormSchema(ma.Schema):
    class Meta:
        unknown = ma.EXCLUDE

    action = ma.fields.String(load_default="", validate=ma.validate.Length(max=32))
    slot = ma.fields.String(load_default=None, validate=ma.validate.Length(max=32))
    csrf = ma.fields.String(load_default="", validate=ma.validate.Length(max=128))


def html(body: str, status: int = 200) -> Response:
    response = make_response(body, status)
    response.mimetype = "text/html"
    response.headers.update(PAGE_HEADERS)
    return response


def nothing_here(status: int = 404) -> Response:
    """The one page for a link that opens nothing: it says nothing about any candidate or call."""
    return html(render_template("calls/page_unavailable.html"), status)


def with_csrf_cookie(render) -> Response:
    """Render the page with the form value for the browser's CSRF cookie (set here when it has
    none)."""
    cookie = request.cookies.get(CSRF_COOKIE)
    fresh = not cookie or len(cookie) > 64
    if fresh:
        cookie = secrets.token_urlsafe(24)
    response = html(render(candidate_page.csrf_value(cookie)))
    if fresh:
        response.set_cookie(
            CSRF_COOKIE,
            cookie,
            httponly=True,
            samesite="Strict",
            secure=request.is_secure,
            path=page_blp.url_prefix,
        )
    return response


@page_blp.route("/<token>")
class CandidatePage(MethodView):
    @page_blp.response(200, description="The page (HTML)", content_type="text/html")
    @page_blp.alt_response(404, description=UNAVAILABLE, content_type="text/html")
    @page_blp.doc(operationId="show_candidate_page")
    def get(self, token):
        """The candidate's page: the job, the call's time in their zone, and what they can do"""
        with database.atomic():
            call = candidate_page.call_behind(token)
            if call is None:
                return nothing_here()
            context = candidate_page.page_context(call)
        done = candidate_page.DONE_MESSAGES.get(request.args.get(DONE_PARAMETER, ""))
        return with_csrf_cookie(
            lambda csrf: render_template(
                "calls/page.html",
                **context,
                csrf=csrf,
                done=done,
                error=None,
                action_url=request.path,
            )
        )

    @page_blp.arguments(PageFormSchema, location="form")
    @page_blp.response(303, description="To the page under the link's replacement")
    @page_blp.alt_response(
        200,
        description="Done (the call is no longer queued), or the page again saying why not",
        content_type="text/html",
        success=True,
    )
    @page_blp.alt_response(
        403,
        description="The form's CSRF value does not match the cookie (HTML)",
        content_type="text/html",
    )
    @page_blp.alt_response(404, description=UNAVAILABLE, content_type="text/html")
    @page_blp.doc(operationId="act_on_candidate_page")
    def post(self, form, token):
        """Move, call now, cancel, or stop calls or texts (one action per link; CSRF-protected)"""
        if not candidate_page.csrf_matches(request.cookies.get(CSRF_COOKIE), form["csrf"]):
            return nothing_here(403)
        # a form this page never sent: the plain page
        if form["action"] not in candidate_page.ACTIONS:
            return nothing_here(404)
        with database.atomic():
            call = candidate_page.call_behind(token)
            if call is None:
                return nothing_here()
            try:
                still_queued = candidate_page.act(call, form["action"], form["slot"])
            except candidate_page.PageActionRefused as refusal:
                problem, context = str(refusal), candidate_page.page_context(call)
                return with_csrf_cookie(
                    lambda csrf: render_template(
                        "calls/page.html",
                        **context,
                        csrf=csrf,
                        done=None,
                        error=problem,
                        action_url=request.path,
                    )
                )
            following = page_links.token_for(still_queued) if still_queued is not None else None
        done = form["action"]
        if following is None:
            return html(
                render_template("calls/page_done.html", message=candidate_page.DONE_MESSAGES[done])
            )
        response = redirect(f"{page_blp.url_prefix}/{following}?{DONE_PARAMETER}={done}", code=303)
        response.headers.update(PAGE_HEADERS)
        return response
