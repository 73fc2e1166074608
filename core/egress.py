"""The egress guard: every outgoing URL a creator or a plugin config can set goes through here.

Two checks, one rule. At save, `url_refusal()` tells a creator what is wrong with a URL
(scheme, user info, query or fragment, a host that resolves to an internal address). At
call time, `guarded_transport()` resolves the host itself and connects only to an address
it has just checked, so a name that changes its answer (DNS rebinding) or a redirect
cannot reach loopback, private, link-local or other internal addresses. Hosts the operator
lists in EGRESS_ALLOW_HOSTS (host names or host:port) skip the address check, for
internal installs such as a self-hosted Dify.
"""

import ipaddress
import logging
import socket
import ssl
from collections.abc import Iterable
from urllib.parse import urlsplit

import httpcore
import httpx
from django.conf import settings

logger = logging.getLogger(__name__)

SCHEMES = ("http", "https")
MAX_URL_LENGTH = 2000
# A target's answer is a JSON document of a few kilobytes; anything far larger is refused.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# IPv6 prefixes that carry an IPv4 address in their last 32 bits (NAT64, RFC 6052/8215).
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
# IPv4-compatible IPv6 (::a.b.c.d), deprecated but still routed by some stacks.
_V4_COMPATIBLE = ipaddress.ip_network("::/96")


_ALLOWLIST_HINT = (
    "An internal server is reached only if the operator lists it in EGRESS_ALLOW_HOSTS."
)


class EgressRefused(httpcore.ConnectError):
    """An outgoing connection the guard refused; the message names the host, never a key."""


def allowed_hosts() -> set[str]:
    """The operator's EGRESS_ALLOW_HOSTS, lower-cased: host names and host:port pairs."""
    configured = getattr(settings, "EGRESS_ALLOW_HOSTS", []) or []
    if isinstance(configured, str):
        configured = configured.split(",")
    return {entry.strip().lower().rstrip(".") for entry in configured if entry.strip()}


def host_is_allowed(host: str, port: int | None) -> bool:
    host = host.strip("[]").lower().rstrip(".")
    allowed = allowed_hosts()
    if host in allowed:
        return True
    if port is None:
        return False
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}" in allowed


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    embedded = []
    if address.ipv4_mapped is not None:
        embedded.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        embedded.append(address.sixtofour)
    if address.teredo is not None:
        embedded.extend(address.teredo)
    compatible = address in _V4_COMPATIBLE and not (address.is_loopback or address.is_unspecified)
    if compatible or any(address in network for network in _NAT64):
        embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return embedded


def address_refusal(address: IPAddress) -> str | None:
    """Why a connection to this address is refused, or None for a public unicast address."""
    if isinstance(address, ipaddress.IPv6Address):
        for inner in _embedded_ipv4(address):
            reason = address_refusal(inner)
            if reason:
                return f"{address} carries {inner}, and {reason}"
    checks = (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_private, "a private address"),
        (address.is_multicast, "a multicast address"),
        (address.is_reserved, "a reserved address"),
        (not address.is_global, "not a globally routable address"),
    )
    for applies, what in checks:
        if applies:
            return f"{address} is {what}"
    return None


def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise EgressRefused(f"The host name '{host}' could not be resolved.") from exc
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in answers:
        # An IPv6 socket address may carry a zone ("fe80::1%eth0"); the zone is not the host.
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise EgressRefused(f"The host name '{host}' could not be resolved.")
    return addresses


def checked_addresses(host: str, port: int) -> list[IPAddress]:
    """Every address the host resolves to, or EgressRefused if any one is not public."""
    addresses = _resolve(host, port)
    for address in addresses:
        reason = address_refusal(address)
        if reason:
            raise EgressRefused(f"'{host}' is refused: {reason}.")
    return addresses


def url_refusal(url: object, *, resolve: bool = True) -> str | None:
    """What is wrong with a creator's base URL, in words a creator can act on; None if fine.

    A base URL has no query or fragment: the caller appends a path to it, and a `?` or `#`
    would swallow that path. With `resolve`, the host's addresses are checked too.
    """
    if not isinstance(url, str) or not url.strip():
        return "Give a URL such as https://dify.example.com."
    if len(url) > MAX_URL_LENGTH:
        return f"A URL is at most {MAX_URL_LENGTH} characters."
    if any(char.isspace() or ord(char) < 32 or char == "\\" for char in url):
        return "A URL has no spaces, control characters or backslashes."
    if "?" in url or "#" in url:
        return "A base URL has no query (?) or fragment (#); give only scheme, host, port and path."
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "This is not a valid URL."
    if parts.scheme.lower() not in SCHEMES:
        return "Only http:// and https:// URLs are allowed."
    if "@" in parts.netloc:
        return "A URL may not carry a user name or password."
    host = parts.hostname or ""
    if not host:
        return "The URL has no host."
    port = port or (443 if parts.scheme.lower() == "https" else 80)
    if host_is_allowed(host, port):
        return None
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses: list[IPAddress] = [literal]
    elif resolve:
        try:
            addresses = _resolve(host, port)
        except EgressRefused as exc:
            return str(exc)
    else:
        return None
    for address in addresses:
        reason = address_refusal(address)
        if reason:
            return f"'{host}' is refused: {reason}. {_ALLOWLIST_HINT}"
    return None


class _GuardedNetworkBackend(httpcore.NetworkBackend):
    """Resolves the host, checks every address, then connects to a checked address only.

    TLS still verifies the certificate against the host name: httpcore sends the URL's host
    as SNI whatever address the connection went to.
    """

    def __init__(self) -> None:
        self._plain = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore.NetworkStream:
        if host_is_allowed(host, port):
            return self._plain.connect_tcp(host, port, timeout, local_address, socket_options)
        try:
            addresses = checked_addresses(host, port)
        except EgressRefused as exc:
            logger.warning("Egress guard refused a connection: %s", exc)
            raise
        failure: Exception | None = None
        for address in addresses:
            try:
                return self._plain.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    def connect_unix_socket(self, *args, **kwargs) -> httpcore.NetworkStream:
        raise EgressRefused("Unix sockets are never reached from outgoing calls.")

    def sleep(self, seconds: float) -> None:
        self._plain.sleep(seconds)


# httpcore's exceptions, as the httpx ones callers catch (most specific first).
_HTTPX_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
)


class GuardedTransport(httpx.BaseTransport):
    """An httpx transport over a connection pool whose every connection the guard checked.

    The answer is read whole (up to MAX_RESPONSE_BYTES) before it is handed back.
    """

    def __init__(self, *, retries: int = 0, ssl_context: ssl.SSLContext | None = None) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context or httpx.create_ssl_context(),
            retries=retries,
            network_backend=_GuardedNetworkBackend(),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = httpcore.URL(
            scheme=request.url.raw_scheme,
            host=request.url.raw_host,
            port=request.url.port,
            target=request.url.raw_path,
        )
        try:
            with self._pool.stream(
                request.method,
                url,
                headers=request.headers.raw,
                content=request.stream,
                extensions=request.extensions,
            ) as answer:
                body = bytearray()
                for chunk in answer.iter_stream():
                    body.extend(chunk)
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise httpx.ReadError("The answer is too large.", request=request)
                status, headers, extensions = answer.status, answer.headers, answer.extensions
        except httpx.HTTPError:
            raise
        except Exception as exc:
            for core_error, httpx_error in _HTTPX_ERRORS:
                if isinstance(exc, core_error):
                    raise httpx_error(str(exc), request=request) from exc
            raise
        extensions = {key: value for key, value in extensions.items() if key != "network_stream"}
        return httpx.Response(
            status, headers=headers, content=bytes(body), extensions=extensions, request=request
        )

    def close(self) -> None:
        self._pool.close()


def guarded_client(*, timeout: float, retries: int) -> httpx.Client:
    """An httpx client that never follows redirects and connects only through the guard."""
    return httpx.Client(
        timeout=timeout,
        transport=GuardedTransport(retries=retries),
        follow_redirects=False,
        trust_env=False,
    )


def refusal_in(exc: BaseException) -> EgressRefused | None:
    """The guard's refusal behind an httpx error, if that is what stopped the call."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, EgressRefused):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
