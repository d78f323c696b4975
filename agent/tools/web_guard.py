"""Where web-fetch may connect: public addresses only, unless the user allowed private ones.

A URL is untrusted input (it comes from the model, which may have read it in a hostile
file), and a fetch from the user's machine reaches what the internet cannot: the router,
cloud metadata at 169.254.169.254, a database on localhost. So every connection goes through
`GuardedBackend`: it resolves the host itself, refuses the connection if *any* resolved
address is loopback, private, link-local, multicast, reserved or unspecified (IPv4 inside
IPv6 included), and then connects to the very address it checked. Checking and connecting
are one step, so a name that resolves to a public address for the check and to 127.0.0.1 for
the connection (DNS rebinding) cannot get through, and every redirect hop opens its
connection through the same check. `allow_private` comes only from the user's settings
(`[web] allow_private`), see agent/settings/config.py.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable

import httpcore

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
MAX_ADDRESSES_TRIED = 8
# 100.64.0.0/10 (carrier-grade NAT) is not `is_private` in every Python, but it is not the internet.
SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")


class AddressRefused(Exception):
    """The host resolves to an address web-fetch must not reach; the message says which."""


def refusal(address: IPAddress) -> str:
    """Why `address` is not a public internet address ("" when it is one)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is not None:
            why = refusal(embedded)
            return f"{why} (inside the IPv6 address {address})" if why else ""
    for flag, words in (
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_unspecified", "an unspecified address"),
        ("is_private", "a private address"),
        ("is_reserved", "a reserved address"),
    ):
        if getattr(address, flag):
            return words
    if isinstance(address, ipaddress.IPv4Address) and address in SHARED_ADDRESS_SPACE:
        return "a carrier-grade NAT address"
    if not address.is_global:
        return "not a public address"
    return ""


def check_addresses(host: str, addresses: Iterable[str], *, allow_private: bool) -> list[str]:
    """The addresses to connect to, in order; AddressRefused if any of them is not public."""
    found = list(dict.fromkeys(a.split("%", 1)[0] for a in addresses))
    if not found:
        raise AddressRefused(f"{host} did not resolve to any address")
    if not allow_private:
        for text in found:
            why = refusal(ipaddress.ip_address(text))
            if why:
                shown = host if host == text else f"{host} ({text})"
                raise AddressRefused(
                    f"{shown} is {why}; web-fetch only reaches public addresses. The user can allow "
                    f"private ones with `allow_private = true` under [web] in their config.toml."
                )
    return found


async def resolve(host: str, port: int) -> list[str]:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return [host.strip("[]")]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise AddressRefused(f"cannot resolve {host}: {getattr(exc, 'strerror', None) or exc}") from None
    return [str(info[4][0]) for info in infos]  # an inet address: always a str


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the address check in `connect_tcp` (TLS still verifies
    the certificate against the host name: httpcore passes it as the server name)."""

    def __init__(self, *, allow_private: bool, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.allow_private = allow_private
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None, socket_options=None
    ) -> httpcore.AsyncNetworkStream:
        addresses = check_addresses(host, await resolve(host, port), allow_private=self.allow_private)
        error: Exception | None = None
        for address in addresses[:MAX_ADDRESSES_TRIED]:
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    async def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options=None):
        raise AddressRefused("web-fetch does not connect to local sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)
