"""Where webhooks may be sent: http(s) URLs whose host resolves only to public addresses.

Checked when a webhook is configured or subscribed, and again before every send. The send resolves
the name once (pin_target), checks every address it got, and the transport connects to the checked
address itself: a name that answers a public address to the check and a private one a moment later
(DNS rebinding) never gets a second lookup.

A refusal never names the private address a host resolved to: echoed to a tenant (in a 422 or a
delivery's error) it would map the operator's internal DNS. The operator's log records it (a warning
on the hirekit.webhooks logger).
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

import idna

log = logging.getLogger("hirekit.webhooks")

DEFAULT_PORTS = {"http": 80, "https": 443}
# Beyond is_private/is_loopback/...: carrier-grade NAT and the cloud metadata services
EXTRA_BLOCKED_NETWORKS = (
    ipaddress.ip_network("100.64.0.0/10"),
    ipaddress.ip_network("169.254.169.254/32"),
    ipaddress.ip_network("fd00:ec2::254/128"),
)
# A last label like this makes the host an IPv4 number to URL parsers and to inet_aton (2130706433,
# 0177.0.0.1, 127.1)
NUMERIC_LABEL = re.compile(r"(0x[0-9a-f]*|[0-9]+)", re.IGNORECASE)


class UnsafeTarget(ValueError):
    """The URL is malformed, not http(s), or points at an address webhooks must not reach."""


@dataclass(frozen=True)
class Target:
    """One send's destination: the configured URL and the checked addresses its connection is made
    to."""

    url: str
    scheme: str
    # ASCII form: the Host header, the TLS server name (SNI) and the name the certificate must carry
    hostname: str
    port: int
    # every address the name had, all checked; the connection goes to the first
    addresses: tuple[str, ...]

    def fallback(self) -> Target | None:
        """The same target pinned to its next checked address (when the first one refused the
        connection)."""
        return replace(self, addresses=self.addresses[1:]) if len(self.addresses) > 1 else None

    @property
    def host_header(self) -> str:
        host = f"[{self.hostname}]" if ":" in self.hostname else self.hostname
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


def is_public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # ::ffff:127.0.0.1 is 127.0.0.1
            return is_public_address(str(ip.ipv4_mapped))
        # 2002:7f00:1:: carries 127.0.0.1
        if ip.sixtofour is not None and not is_public_address(str(ip.sixtofour)):
            return False
        if ip.is_site_local:
            return False
    if any(ip in network for network in EXTRA_BLOCKED_NETWORKS if network.version == ip.version):
        return False
    return ip.is_global and not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


def resolve(host: str, port: int) -> list[str]:
    """Every address the name has, in the resolver's order of preference."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeTarget(f"host {host!r} does not resolve") from exc
    return list(dict.fromkeys(info[4][0] for info in infos))


def parse(url: str) -> tuple[str, str, int]:
    """(scheme, ASCII host name, port) of a URL a webhook may have, whatever it resolves to."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeTarget(f"not a valid URL: {exc}") from exc
    if parts.scheme not in DEFAULT_PORTS:
        raise UnsafeTarget("the URL must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise UnsafeTarget(
            "credentials in the URL are not allowed; use the secret to authenticate deliveries"
        )
    host = parts.hostname
    if not host:
        raise UnsafeTarget("the URL has no host")
    if port == 0:
        raise UnsafeTarget("port 0 is not a port")
    if host.endswith("."):
        raise UnsafeTarget(f"host {host!r} ends with a dot; write the name without it")
    if ":" not in host:
        try:
            host = idna.encode(host, uts46=True).decode("ascii") if not host.isascii() else host
        except idna.IDNAError as exc:
            raise UnsafeTarget(f"host {host!r} is not a valid host name") from exc
        if NUMERIC_LABEL.fullmatch(host.rsplit(".", 1)[-1]) and not _is_dotted_quad(host):
            raise UnsafeTarget(
                f"host {host!r} is an IPv4 address spelled unusually; write it as four decimal "
                "numbers"
            )
    return parts.scheme, host, port or DEFAULT_PORTS[parts.scheme]


def _is_dotted_quad(host: str) -> bool:
    try:
        ipaddress.IPv4Address(host)  # four decimal parts, no leading zeros
    except ValueError:
        return False
    return True


def pin_target(url: str, *, allow_private: bool) -> Target:
    """Resolve the URL's host once and check every address; the send connects to them (never to a
    second lookup)."""
    scheme, host, port = parse(url)
    addresses = resolve(host, port)
    if not addresses:
        raise UnsafeTarget(f"host {host!r} does not resolve")
    if not allow_private:
        refused = [address for address in addresses if not is_public_address(address)]
        # the address is for the operator's log only: echoed to a tenant it would map internal DNS
        if refused:
            log.warning("webhook host %r refused: it resolves to %s", host, ", ".join(refused))
            raise UnsafeTarget(
                f"host {host!r} points at a private, loopback, link-local or reserved address"
            )
    return Target(url=url, scheme=scheme, hostname=host, port=port, addresses=tuple(addresses))


def check_target(url: str, *, allow_private: bool) -> None:
    """Raise UnsafeTarget unless `url` is an http(s) URL a webhook may be configured with."""
    if allow_private:
        parse(url)  # local receivers allowed: the name need not resolve yet
    else:
        pin_target(url, allow_private=False)
