"""The pages a person sees while authorizing an agent host: sign-in, consent, their authorized
clients and errors.

Rendered on the server (no script needed), in English with labelled fields in reading order; every
page is sent with headers that forbid framing and scripts, and every form carries a token matched
against a cookie (and an Origin check), so another site can neither frame these pages nor post to
them."""

from __future__ import annotations

import hmac
import secrets

from flask import current_app, make_response, request
from jinja2 import DictLoader, Environment, select_autoescape

from app.security import tokens

SESSION_COOKIE = "hirekit_signin"
CSRF_COOKIE = "hirekit_csrf"
SESSION_KIND = "oauth-sign-in"
COOKIE_PATH = "/oauth"

PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # "no-referrer" would make browsers send Origin: null on our own forms
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

LAYOUT = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{% block title %}{% endblock %} - Hirekit</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 36rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; }
label { display: block; margin-top: 1rem; font-weight: 600; }
input[type=email], input[type=password] { display: block; width: 100%; padding: .5rem; font-size: 1rem;
  box-sizing: border-box; }
button { margin-top: 1.25rem; margin-right: .5rem; padding: .6rem 1.2rem; font-size: 1rem; }
:focus-visible { outline: 3px solid #1a5fb4; outline-offset: 2px; }
.alert { border-left: 4px solid #c01c28; padding: .5rem 1rem; background: #fdeeee; }
.note { color: #3d3d3d; }
fieldset { margin-top: 1rem; border: 1px solid #999; }
</style>
</head>
<body>
<main>
{% block main %}{% endblock %}
</main>
</body>
</html>
"""  # noqa: E501

SIGN_IN = """{% extends "layout" %}
{% block title %}Sign in{% endblock %}
{% block main %}
<h1>Sign in to Hirekit</h1>
{% if client_name %}<p><strong>{{ client_name }}</strong> wants to connect to your organisation's Hirekit.
Sign in to decide what it may do.</p>{% endif %}
{% if error %}<p class="alert" role="alert" id="sign-in-error">{{ error }}</p>{% endif %}
<form method="post" action="{{ action }}">
<input type="hidden" name="csrf_token" value="{{ csrf_token }}">
<input type="hidden" name="next" value="{{ next }}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus value="{{ email }}"
  {% if error %}aria-describedby="sign-in-error"{% endif %}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
{% endblock %}
"""  # noqa: E501

CONSENT = """{% extends "layout" %}
{% block title %}Allow {{ client_name }}?{% endblock %}
{% block main %}
<h1>Allow {{ client_name }} to use Hirekit?</h1>
<p>You are signed in as <strong>{{ user_email }}</strong> of <strong>{{ tenant_name }}</strong> ({{ tenant_id }}).</p>
<dl>
<dt>Application</dt><dd>{{ client_name }}</dd>
<dt>Who describes it</dt>
<dd>{% if document_host %}Its description is published at {{ document_host }} ({{ client_id }}).
{% else %}It registered itself with Hirekit; Hirekit has not verified who runs it or its name.{% endif %}</dd>
<dt>After you decide, you return to</dt><dd>{{ redirect_host }}</dd>
<dt>It will reach</dt><dd>{{ resource_name }} ({{ resource }})</dd>
</dl>
<form method="post" action="{{ action }}">
<input type="hidden" name="csrf_token" value="{{ csrf_token }}">
<fieldset>
<legend>It asks to:</legend>
{% for scope, words in scopes %}
<label><input type="checkbox" name="granted_scope" value="{{ scope }}" checked> {{ words }}
<span class="note">({{ scope }})</span></label>
{% endfor %}
</fieldset>
<p class="note">Untick what you do not want to allow. You can revoke this at any time on
<a href="{{ authorizations_url }}">your authorized applications</a>.</p>
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
{% endblock %}
"""  # noqa: E501

AUTHORIZATIONS = """{% extends "layout" %}
{% block title %}Authorized applications{% endblock %}
{% block main %}
<h1>Applications you authorized</h1>
<p>Signed in as <strong>{{ user_email }}</strong> of <strong>{{ tenant_name }}</strong>.</p>
{% if notice %}<p role="status">{{ notice }}</p>{% endif %}
{% if not items %}<p>You have not authorized any application.</p>{% endif %}
<ul>
{% for item in items %}
<li><strong>{{ item.client_name }}</strong> ({{ item.client_id }}): {{ item.scopes | join(", ") }}.
Authorized {{ item.created_at.strftime("%Y-%m-%d %H:%M") }} UTC.
<form method="post" action="{{ revoke_url }}/{{ item.id }}/revoke">
<input type="hidden" name="csrf_token" value="{{ csrf_token }}">
<button type="submit">Revoke {{ item.client_name }}</button>
</form></li>
{% endfor %}
</ul>
<form method="post" action="{{ sign_out_url }}">
<input type="hidden" name="csrf_token" value="{{ csrf_token }}">
<button type="submit">Sign out</button>
</form>
{% endblock %}
"""

ERROR = """{% extends "layout" %}
{% block title %}Cannot continue{% endblock %}
{% block main %}
<h1>This request cannot continue</h1>
<p class="alert" role="alert">{{ message }}</p>
<p class="note">Error: {{ error }}. Go back to the application and try connecting again.</p>
{% endblock %}
"""

pages = Environment(
    loader=DictLoader(
        {
            "layout": LAYOUT,
            "sign_in": SIGN_IN,
            "consent": CONSENT,
            "authorizations": AUTHORIZATIONS,
            "error": ERROR,
        }
    ),
    autoescape=select_autoescape(default=True, default_for_string=True),
)


def csrf_token() -> str:
    """This browser's form token: the cookie's value, or a new one the answer sets."""
    return request.cookies.get(CSRF_COOKIE) or request.environ.setdefault(
        "hirekit.csrf", secrets.token_urlsafe(32)
    )


def render(name: str, status: int = 200, **values):
    """A page with its protective headers (and the form token's cookie when it is new)."""
    token = csrf_token()
    response = make_response(pages.get_template(name).render(csrf_token=token, **values), status)
    response.mimetype = "text/html"
    response.headers.update(PAGE_HEADERS)
    if request.cookies.get(CSRF_COOKIE) != token:
        set_cookie(response, CSRF_COOKIE, token, max_age=None)
    return response


def set_cookie(response, name: str, value: str, *, max_age) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=COOKIE_PATH,
        secure=request.is_secure,
        httponly=True,
        samesite="Lax",
    )


def form_is_ours() -> bool:
    """A form post from our own page: its token equals this browser's cookie, and its Origin (when
    sent) is ours."""
    origin = request.headers.get("Origin")
    if origin is not None and origin.rstrip("/") != request.host_url.rstrip("/"):
        return False
    sent, kept = request.form.get("csrf_token", ""), request.cookies.get(CSRF_COOKIE, "")
    return bool(kept) and hmac.compare_digest(sent.encode(), kept.encode())


def signed_in_user_id() -> str | None:
    value = request.cookies.get(SESSION_COOKIE)
    if not value:
        return None
    try:
        payload = tokens.verify(
            SESSION_KIND, value, float(current_app.config["OAUTH_SIGN_IN_SECONDS"])
        )
    except tokens.InvalidToken:
        return None
    return payload.get("user") if isinstance(payload, dict) else None


def sign_in(response, user_id: str) -> None:
    set_cookie(
        response,
        SESSION_COOKIE,
        tokens.sign(SESSION_KIND, {"user": user_id}),
        max_age=int(current_app.config["OAUTH_SIGN_IN_SECONDS"]),
    )


def sign_out(response) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path=COOKIE_PATH, secure=request.is_secure, httponly=True, samesite="Lax"
    )
