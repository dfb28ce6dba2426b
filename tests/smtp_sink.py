"""A small SMTP server on 127.0.0.1 for tests: speaks enough ESMTP (EHLO, AUTH PLAIN, MAIL, RCPT,
DATA) to receive what smtplib sends, and keeps each message parsed."""

from __future__ import annotations

import base64
import email
import email.policy
import socketserver
import threading
from dataclasses import dataclass, field


@dataclass
class Received:
    mail_from: str
    recipients: list[str]
    message: email.message.EmailMessage
    login: tuple[str, str] | None


@dataclass
class SmtpSink:
    """Start with `with SmtpSink() as sink:`; sink.port to connect, sink.messages for what
    arrived."""

    credentials: tuple[str, str] | None = None  # advertise AUTH PLAIN and accept only these
    rcpt_reply: str | None = None  # answer every RCPT with this ("450 4.2.0 greylisted"), when set
    messages: list[Received] = field(default_factory=list)

    def __enter__(self) -> SmtpSink:
        sink = self

        class Session(socketserver.StreamRequestHandler):
            def reply(self, text: str) -> None:
                self.wfile.write(text.encode() + b"\r\n")

            def handle(self):
                login, sender, recipients = None, "", []
                self.reply("220 sink.test ESMTP")
                while line := self.rfile.readline():
                    command, _, argument = line.decode().rstrip("\r\n").partition(" ")
                    verb = command.upper()
                    if verb == "EHLO":
                        self.reply(
                            "250-sink.test"
                            + ("\r\n250-AUTH PLAIN" if sink.credentials else "")
                            + "\r\n250 8BITMIME"
                        )
                    elif verb == "HELO" or verb in ("NOOP", "RSET"):
                        self.reply("250 ok")
                    elif verb == "AUTH":
                        mechanism, _, initial = argument.partition(" ")
                        _, user, password = base64.b64decode(initial).decode().split("\0")
                        if mechanism.upper() == "PLAIN" and (user, password) == sink.credentials:
                            login = (user, password)
                            self.reply("235 authenticated")
                        else:
                            self.reply("535 authentication failed")
                    elif verb == "MAIL":
                        sender, recipients = argument.split(":", 1)[1].split()[0].strip("<>"), []
                        self.reply("250 ok")
                    elif verb == "RCPT":
                        if sink.credentials and login is None:
                            self.reply("530 authentication required")
                            continue
                        if sink.rcpt_reply:
                            self.reply(sink.rcpt_reply)
                            continue
                        recipients.append(argument.split(":", 1)[1].strip().strip("<>"))
                        self.reply("250 ok")
                    elif verb == "DATA":
                        self.reply("354 end with <CRLF>.<CRLF>")
                        data = bytearray()
                        while (chunk := self.rfile.readline()) not in (b".\r\n", b""):
                            data += chunk[1:] if chunk.startswith(b"..") else chunk
                        message = email.message_from_bytes(bytes(data), policy=email.policy.default)
                        sink.messages.append(Received(sender, recipients, message, login))
                        self.reply("250 queued")
                    elif verb == "QUIT":
                        self.reply("221 bye")
                        return
                    else:
                        self.reply("502 not implemented")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Session)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
