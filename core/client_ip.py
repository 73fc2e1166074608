"""The address of the client behind a request, read through the proxies we trust.

`X-Forwarded-For` is written by whoever sent the request, so it is believed only as far as
the hops that appended to it are proxies of ours (TRUSTED_PROXIES). Walking the list from
the right, the first address that is not a trusted proxy is the client; an untrusted peer
that sends the header is itself the client, whatever it claims.
"""

import ipaddress
from collections.abc import Iterable
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def trusted_proxy_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """'10.0.0.0/8', '192.0.2.7' -> networks; ValueError names a bad entry."""
    networks = []
    for value in values:
        value = value.strip()
        if not value:
            continue
        try:
            networks.append(ipaddress.ip_network(value, strict=False))
        except ValueError:
            raise ValueError(f"{value!r} is not an IP address or CIDR network.") from None
    return tuple(networks)


@lru_cache(maxsize=8)
def _networks(values: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return trusted_proxy_networks(values)


def _parse(value: str) -> IPAddress | None:
    value = value.strip()
    if value.startswith("[") and "]" in value:  # "[2001:db8::1]:443"
        value = value[1 : value.index("]")]
    elif value.count(":") == 1:  # "192.0.2.1:443"
        value = value.partition(":")[0]
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def _trusted(address: IPAddress, networks: tuple[IPNetwork, ...]) -> bool:
    return any(address.version == network.version and address in network for network in networks)


def client_ip(request: HttpRequest) -> str:
    peer = _parse(request.META.get("REMOTE_ADDR", "") or "")
    if peer is None:
        return "unknown"
    networks = _networks(tuple(settings.TRUSTED_PROXIES))
    if not networks or not _trusted(peer, networks):
        return str(peer)
    client = peer
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for hop in reversed(forwarded.split(",") if forwarded else []):
        address = _parse(hop)
        if address is None:
            # A garbled entry cannot be attributed; the last hop we could trust stands.
            break
        client = address
        if not _trusted(address, networks):
            break
    return str(client)
