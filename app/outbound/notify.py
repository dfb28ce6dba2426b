"""Notifier: how reminder emails reach candidates. Logged by default; over SMTP when
HIREKIT_SMTP_HOST is set. (Text messages go through the telephony provider, which owns the number
they come from, e.g. plugins.calls.telephony.)"""

from __future__ import annotations

import logging
import smtplib
from email.message import EmailMessage

from flask import current_app

log = logging.getLogger("hirekit.notify")


class Notifier:
    """Sends email; this base class writes it to the log (the embedded default)."""

    def send_email(self, to: str, subject: str, body: str, html: str | None = None) -> None:
        """Send `body` (plain text) to `to`, with `html` as its HTML alternative when given."""
        log.info("email to %s: %s | %s", to, subject, body)


class SmtpNotifier(Notifier):
    """Email through an SMTP relay (STARTTLS and login when configured)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        sender: str,
        username: str = "",
        password: str = "",
        starttls: bool = True,
    ):
        self.host, self.port, self.sender = host, port, sender
        self.username, self.password, self.starttls = username, password, starttls

    def send_email(self, to: str, subject: str, body: str, html: str | None = None) -> None:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = self.sender, to, subject
        message.set_content(body)
        if html is not None:
            message.add_alternative(html, subtype="html")
        with smtplib.SMTP(self.host, self.port, timeout=10) as smtp:
            if self.starttls:
                smtp.starttls()
            if self.username:
                smtp.login(self.username, self.password)
            smtp.send_message(message)


def get_notifier(app=None) -> Notifier:
    """The configured notifier; tests may put their own in app.extensions['hirekit_notifier']."""
    app = app or current_app
    if "hirekit_notifier" not in app.extensions:
        config = app.config
        if config.get("SMTP_HOST"):
            app.extensions["hirekit_notifier"] = SmtpNotifier(
                config["SMTP_HOST"],
                int(config["SMTP_PORT"]),
                sender=config["SMTP_FROM"] or f"hirekit@{config['SMTP_HOST']}",
                username=config["SMTP_USERNAME"],
                password=config["SMTP_PASSWORD"],
                starttls=bool(config["SMTP_STARTTLS"]),
            )
        else:
            app.extensions["hirekit_notifier"] = Notifier()
    return app.extensions["hirekit_notifier"]
