"""Where webhooks may be sent: http(s) URLs whose host resolves only to public addresses (checked at configuration and before each send)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

ALLOWED_SCHEMES = ("http", "https")
# Beyond is_private/is_loopback/...: carrier-grade NAT and the cloud metadata service
EXTRA_BLOCKED_NETWORKS = (ipaddress.ip_network("100.64.0.0/10"), ipaddress.ip_network("169.254.169.254/32"),
                          ipaddress.ip_network("fd00:ec2::254/128"))


class UnsafeTarget(ValueError):
    """The URL is malformed, not http(s), or points at an address webhooks must not reach."""


def is_public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in network for network in EXTRA_BLOCKED_NETWORKS if network.version == ip.version):
        return False
    return not (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
                or ip.is_unspecified or not ip.is_global)


def resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeTarget(f"host {host!r} does not resolve") from exc
    return sorted({info[4][0] for info in infos})


def check_target(url: str, *, allow_private: bool) -> None:
    """Raise UnsafeTarget unless `url` is an http(s) URL a webhook may be sent to."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeTarget(f"not a valid URL: {exc}") from exc
    if parts.scheme not in ALLOWED_SCHEMES:
        raise UnsafeTarget("the URL must start with http:// or https://")
    if not parts.hostname:
        raise UnsafeTarget("the URL has no host")
    if parts.username or parts.password:
        raise UnsafeTarget("credentials in the URL are not allowed; use the secret to authenticate deliveries")
    if allow_private:
        return
    refused = [address for address in resolve(parts.hostname, port) if not is_public_address(address)]
    if refused:
        raise UnsafeTarget(f"host {parts.hostname!r} resolves to a private, loopback or link-local address ({refused[0]})")
