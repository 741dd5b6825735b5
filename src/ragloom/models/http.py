"""The HTTP client every remote model provider (embeddings, chat, rerank) talks through, the guard on
where it may connect, and how a provider's failed reply is described.

**The outbound guard.** A workspace's own providers (``PUT /api/v1/providers/{kind}``) are URLs that
anyone who owns a workspace may set, and the server then calls them: without a guard that would let
anyone make the server read its own loopback services, the cloud's metadata service or the private
network (server-side request forgery). A client built with :class:`GuardedTransport` therefore
resolves the host itself, checks *every* address it resolves to against :func:`address_kind` — the
loopback, link-local (cloud metadata ``169.254.169.254``), private, shared (carrier-grade NAT),
multicast, unspecified and reserved ranges of IPv4 and IPv6, unique-local ``fc00::/7`` (AWS's
``fd00:ec2::254``), and IPv4 addresses embedded in IPv6 (mapped ``::ffff:10.0.0.5``, 6to4, Teredo,
NAT64) judged as the IPv4 address they carry — and connects to the very address it checked, while
the request keeps the host name (``Host`` header, TLS SNI and certificate check). So neither a DNS
answer that changes between the check and the connection nor a redirect (every hop connects through
the same transport) gets past it, and no proxy from the environment is used. An administrator allows
ranges with ``RAGLOOM_OUTBOUND_ALLOW`` (:class:`OutboundPolicy`), e.g. ``127.0.0.1/32`` for a local
Ollama. The server's own models (``RAGLOOM_CHAT_BASE_URL`` and the like) are set by the administrator
and are not guarded.

**Failed replies** are described by :func:`reply_problem`: the status, the content type and size, and
only a JSON error object's own message — never the body of a reply that is not JSON, so a provider
URL cannot be used to read another service's pages through the error messages.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

__all__ = ["ALLOW_SETTING", "GuardedTransport", "OutboundPolicy", "address_kind", "api_client", "parse_networks",
           "reply_problem"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOW_SETTING = "RAGLOOM_OUTBOUND_ALLOW"
_METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OpenStack...
    "fd00:ec2::254",  # AWS over IPv6
    "100.100.100.200",  # Alibaba Cloud
    "192.0.0.192",  # Oracle Cloud
))
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT (RFC 6598)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # IPv4 reached through a NAT64 gateway (RFC 6052)
_SNIPPET = 200  # characters of a JSON error message shown


def api_client(base_url: str, api_key: str | None, *, timeout: float,
               transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """A client for ``base_url`` sending ``Authorization: Bearer <api_key>`` when a key is given.
    With a :class:`GuardedTransport` no proxy of the environment is used (it would connect instead
    of the guard)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport,
                        trust_env=not isinstance(transport, GuardedTransport))


# --- the outbound guard ---------------------------------------------------------------------------

def _embedded_v4(ip: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo client, NAT64); None otherwise."""
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_kind(ip: Address) -> str | None:
    """Why ``ip`` is no address of the public internet (``"a private address"``...); None when it is one."""
    inner = _embedded_v4(ip)
    if inner is not None:
        return address_kind(inner)
    if ip in _METADATA:
        return "a cloud metadata address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED:
        return "a shared (carrier-grade NAT) address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return "a site-local address"
    if ip.is_private:
        return "a private address"
    if not ip.is_global or ip.is_reserved:
        return "a reserved address"
    return None


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """CIDR ranges (``10.1.2.0/24``, ``127.0.0.1``, ``fd12::/64``); ``ValueError`` for one that is not."""
    return tuple(ipaddress.ip_network(v.strip(), strict=False) for v in values if v.strip())


@dataclass(frozen=True, slots=True)
class OutboundPolicy:
    """Which addresses a guarded client may connect to: every public one, and the ``allow`` ranges."""

    allow: tuple[Network, ...] = ()

    @classmethod
    def allowing(cls, cidrs: Iterable[str]) -> OutboundPolicy:
        return cls(parse_networks(cidrs))

    def refusal(self, subject: str, ip: Address) -> str | None:
        """Why a connection to ``ip`` (named ``subject`` in the message) is refused; None when it may go."""
        kind = address_kind(ip)
        if kind is None:
            return None
        candidates = [ip] + [inner for inner in (_embedded_v4(ip),) if inner is not None]
        if any(c.version == net.version and c in net for c in candidates for net in self.allow):
            return None
        where = f"{ip} is" if subject == str(ip) else f"{subject} resolves to {ip},"
        return f"{where} {kind}; an administrator can allow it with {ALLOW_SETTING}"

    def screen(self, host: str, port: int, subject: str | None = None) -> tuple[list[str], str | None]:
        """Every address ``host`` resolves to, and why the first refused one is refused (None when all
        may be connected to); ``OSError`` when the name does not resolve."""
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
        addresses = list(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in infos))
        for address in addresses:
            reason = self.refusal(subject or host, ipaddress.ip_address(address))
            if reason is not None:
                return addresses, reason
        return addresses, None


class _GuardedBackend(httpcore.SyncBackend):
    """httpcore's network backend, connecting only to addresses the policy allows (checked here, at
    connection time, for every connection: after a redirect and a DNS change too)."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        try:
            addresses, refused = self.policy.screen(host, port)
        except OSError as exc:
            raise httpcore.ConnectError(f"{host} does not resolve: {exc}") from exc
        if refused is not None:
            raise httpcore.ConnectError(f"refused: {refused}")
        error: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for address in addresses:  # the checked address itself: no second lookup that could differ
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error


class GuardedTransport(httpx.HTTPTransport):
    """An httpx transport whose every connection is checked by an :class:`OutboundPolicy` (see the
    module's docstring). Requests keep their host name: ``Host``, SNI and the certificate check."""

    def __init__(self, policy: OutboundPolicy) -> None:
        super().__init__(trust_env=False)
        self.policy = policy
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False), max_connections=100,
            max_keepalive_connections=20, keepalive_expiry=5.0, network_backend=_GuardedBackend(policy))


# --- describing a failed reply ----------------------------------------------------------------------

def _error_message(payload: Any) -> str | None:
    """The message of an error object of the common shapes: ``{"error": {"message"}}``, ``{"error": "..."}``,
    ``{"message"}``, ``{"detail"}``."""
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if isinstance(error, dict):
        error = error.get("message")
    for value in (error, payload.get("message"), payload.get("detail")):
        if isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "..."
    return None


def reply_problem(resp: httpx.Response) -> str:
    """What is wrong with a reply that is not the expected one, without its body: its content type and
    size, and a JSON error object's message when there is one (``invalid API key``)."""
    kind = resp.headers.get("content-type", "").split(";", 1)[0].strip().lower() or "no content type"
    message = None
    if kind == "application/json" or kind.endswith("+json"):
        try:
            message = _error_message(json.loads(resp.content))
        except ValueError:
            message = None
    if message is not None:
        return f"{kind}: {message}"
    return f"{kind}, {len(resp.content)} bytes: not an OpenAI-compatible reply"
