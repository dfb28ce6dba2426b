"""/docs: Swagger UI from the pinned flask-swagger-ui package's files, served by the app itself
under a Content-Security-Policy that allows only the app's own origin, so the page works air-gapped
and loads nothing else."""

from __future__ import annotations

from pathlib import Path

import flask_swagger_ui
from flask import Blueprint, Response, current_app, render_template_string, url_for

SWAGGER_UI_FILES = Path(flask_swagger_ui.__file__).resolve().parent / "dist"
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'self'"
)

blp = Blueprint(
    "swagger_ui", __name__, static_folder=str(SWAGGER_UI_FILES), static_url_path="/docs/static"
)

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{{ title }}</title>
  <link rel="stylesheet" href="{{ url_for('swagger_ui.static', filename='swagger-ui.css') }}">
  <link rel="icon" type="image/png" href="{{ url_for('swagger_ui.static', filename='favicon-32x32.png') }}">
</head>
<body>
  <div id="swagger-ui" data-spec-url="{{ spec_url }}"></div>
  <script src="{{ url_for('swagger_ui.static', filename='swagger-ui-bundle.js') }}"></script>
  <script src="{{ url_for('swagger_ui.static', filename='swagger-ui-standalone-preset.js') }}"></script>
  <script src="{{ url_for('swagger_ui.initializer') }}"></script>
</body>
</html>
"""  # noqa: E501

# An inline script would need 'unsafe-inline' in the policy: the page's only own script is this
# file. validatorUrl is null so Swagger UI does not send the document to its public validator.
INITIALIZER = """window.addEventListener("load", function () {
  var container = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: container.dataset.specUrl,
    dom_id: "#swagger-ui",
    validatorUrl: null,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis]
  });
});
"""


@blp.after_request
def _only_own_origin(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return response


@blp.get("/docs")
def page():
    """The Swagger UI page for /openapi.json."""
    return render_template_string(
        PAGE,
        title=f"{current_app.config['API_TITLE']} API",
        spec_url=url_for("api-docs.openapi_json"),
    )


@blp.get("/docs/swagger-initializer.js")
def initializer():
    return Response(
        INITIALIZER, mimetype="text/javascript", headers={"Cache-Control": "public, max-age=3600"}
    )


def init_app(app) -> None:
    app.register_blueprint(blp)
