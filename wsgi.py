"""The WSGI entry point: `gunicorn wsgi:app`, `flask --app wsgi ...`."""

from app import create_app
from app.server.startup_checks import STARTUP_ERRORS

try:
    app = create_app()
except STARTUP_ERRORS as error:  # a configuration an operator fixes: one line, not a traceback
    raise SystemExit(f"Error: {error}") from None
