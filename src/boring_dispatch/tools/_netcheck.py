"""Which IP addresses an outbound HTTP request may reach.

The rule is an allowlist, not a blocklist: an address is public only when it
is outside every special-purpose block of the IANA registries below (IPv4), or
inside global unicast ``2000::/3`` and outside its special blocks (IPv6).
Addresses that carry an IPv4 address (IPv4-mapped ``::ffff:0:0/96`` and NAT64
``64:ff9b::/96``) are judged by the IPv4 address they carry. 6to4, Teredo and
the deprecated IPv4-compatible form are refused outright: a tool has no need
for tunnels, and they hide the real destination. The stdlib's own flags are
consulted last and can only add refusals, never remove one.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

__all__ = ["address_refusal"]

# (network, reason) pairs; the first match names the reason.
_IPV4_BLOCKS: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), reason)
    for net, reason in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "private"),  # shared address space (carrier-grade NAT)
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),  # includes cloud metadata 169.254.169.254
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),  # IETF protocol assignments
        ("192.0.2.0/24", "reserved"),  # documentation
        ("192.88.99.0/24", "reserved"),  # 6to4 relay anycast
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "reserved"),  # benchmarking
        ("198.51.100.0/24", "reserved"),  # documentation
        ("203.0.113.0/24", "reserved"),  # documentation
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),  # includes broadcast 255.255.255.255
    )
)

_IPV6_BLOCKS: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), reason)
    for net, reason in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "private"),  # local-use NAT64
        ("100::/64", "reserved"),  # discard-only
        ("2001::/32", "tunnelled"),  # Teredo
        ("2001::/23", "reserved"),  # IETF protocol assignments
        ("2001:db8::/32", "reserved"),  # documentation
        ("2002::/16", "tunnelled"),  # 6to4
        ("3fff::/20", "reserved"),  # documentation
        ("5f00::/16", "reserved"),  # segment routing
        ("fc00::/7", "private"),  # unique local
        ("fe80::/10", "link-local"),
        ("fec0::/10", "private"),  # deprecated site-local
        ("ff00::/8", "multicast"),
        ("::/8", "reserved"),  # after 64:ff9b:1::/48; includes IPv4-compatible ::a.b.c.d
    )
)

_GLOBAL_UNICAST = IPv6Network("2000::/3")
_NAT64 = IPv6Network("64:ff9b::/96")


def address_refusal(address: IPv4Address | IPv6Address) -> str | None:
    """Say why ``address`` must not be contacted, or ``None`` when it is public.

    Args:
        address: A resolved or literal address.

    Returns:
        ``None`` for a public unicast address; otherwise one of ``"unspecified"``,
        ``"loopback"``, ``"private"``, ``"link-local"``, ``"multicast"``,
        ``"reserved"`` or ``"tunnelled"``.
    """
    if isinstance(address, IPv6Address):
        if address.scope_id is not None:
            return "link-local"
        embedded = address.ipv4_mapped
        if embedded is None and address in _NAT64:
            embedded = IPv4Address(int(address) & 0xFFFF_FFFF)
        if embedded is not None:
            return address_refusal(embedded)
        reason = _first_block(address, _IPV6_BLOCKS)
        if reason is None and address not in _GLOBAL_UNICAST:
            reason = "reserved"
    else:
        reason = _first_block(address, _IPV4_BLOCKS)
    return reason if reason is not None else _stdlib_refusal(address)


def _first_block(
    address: IPv4Address | IPv6Address,
    blocks: tuple[tuple[IPv4Network, str], ...] | tuple[tuple[IPv6Network, str], ...],
) -> str | None:
    for network, reason in blocks:
        if address in network:
            return reason
    return None


def _stdlib_refusal(address: IPv4Address | IPv6Address) -> str | None:
    # Defence in depth: a stdlib that knows of a newer special block still refuses it.
    flags = (
        (address.is_unspecified, "unspecified"),
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local"),
        (address.is_multicast, "multicast"),
        (address.is_private, "private"),
        (address.is_reserved, "reserved"),
        (not address.is_global, "reserved"),
    )
    for flagged, reason in flags:
        if flagged:
            return reason
    return None
