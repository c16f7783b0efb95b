"""Which network interface NCCL should bootstrap over: the rule, pure.

The same rule as the C++ runtime (runtime/src/socket_ifname.cc), checked against it on the same
inputs by tests/test_runtime_agreement.py. A user's NCCL_SOCKET_IFNAME is kept verbatim (NCCL's
syntax: "^" excludes, "=" matches exactly, otherwise each comma-separated entry is a name prefix),
with a warning for each entry that matches no interface here. Otherwise the interface that holds
the pod IP, else the default route's interface, else nothing (NCCL picks on its own).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

USER = "user"
POD_IP = "pod-ip"
DEFAULT_ROUTE = "default-route"
NONE = "none"


@dataclass(frozen=True)
class InterfaceAddress:
    """One address of an interface that is up: ``name`` and numeric IPv4/IPv6 ``ip``."""

    name: str
    ip: str


@dataclass(frozen=True)
class IfnameChoice:
    """``value``: what NCCL_SOCKET_IFNAME holds afterwards ("" when unset); ``source``: one of
    ``user``, ``pod-ip``, ``default-route``, ``none``; ``warnings``: lines for the log."""

    value: str
    source: str
    warnings: Tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class IfnameSpec:
    """NCCL's NCCL_SOCKET_IFNAME syntax, parsed."""

    exclude: bool
    exact: bool
    names: Tuple[str, ...]


def parse_ifname_spec(value: str) -> IfnameSpec:
    """Splits ``^=eth0,ib`` into its flags and names (empty entries dropped)."""
    exclude = value.startswith("^")
    if exclude:
        value = value[1:]
    exact = value.startswith("=")
    if exact:
        value = value[1:]
    names = tuple(item for item in value.split(",") if item) if value else ()
    return IfnameSpec(exclude=exclude, exact=exact, names=names)


def _matches(spec: IfnameSpec, pattern: str, name: str) -> bool:
    return name == pattern if spec.exact else name.startswith(pattern)


def _warnings_for_user_value(value: str, interfaces: Sequence[InterfaceAddress]) -> List[str]:
    spec = parse_ifname_spec(value)
    warnings = []
    for pattern in spec.names:
        if any(_matches(spec, pattern, itf.name) for itf in interfaces):
            continue
        what = (f"no interface named '{pattern}'" if spec.exact
                else f"no interface whose name starts with '{pattern}'")
        tail = (" (excluding it changes nothing)" if spec.exclude
                else "; NCCL may find no interface to bootstrap over")
        warnings.append(f"NCCL_SOCKET_IFNAME='{value}': {what} exists in this pod{tail}")
    return warnings


def choose_socket_ifname(user_value: Optional[str], pod_ip: str, interfaces: Sequence[InterfaceAddress],
                         default_route_interface: str) -> IfnameChoice:
    """The rule. ``user_value`` is NCCL_SOCKET_IFNAME as found (None: unset), ``pod_ip`` is
    NCCLJOB_POD_IP ("" when not given), ``default_route_interface`` "" when there is none."""
    if user_value:
        return IfnameChoice(user_value, USER, tuple(_warnings_for_user_value(user_value, interfaces)))
    warnings = []
    if pod_ip:
        for itf in interfaces:
            if itf.ip == pod_ip:
                return IfnameChoice(itf.name, POD_IP)
        warnings.append(f"NCCLJOB_POD_IP={pod_ip} is on no interface of this process's network namespace; "
                        "falling back to the default route's interface")
    if default_route_interface:
        return IfnameChoice(default_route_interface, DEFAULT_ROUTE, tuple(warnings))
    warnings.append("found neither the pod IP's interface nor a default route; NCCL_SOCKET_IFNAME stays unset "
                    "and NCCL chooses (set spec.network.socketIfname to choose)")
    return IfnameChoice("", NONE, tuple(warnings))


def _strtol(text: str, base: int) -> int:
    """C's strtol: leading spaces, a sign, "0x" for base 16, the longest valid prefix; 0 if none."""
    text = text.lstrip()
    sign = 1
    if text[:1] in ("+", "-"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if base == 16 and text[:2].lower() == "0x" and len(text) > 2 and text[2] in "0123456789abcdefABCDEF":
        text = text[2:]
    digits = "0123456789abcdef"[:base]
    end = 0
    while end < len(text) and text[end].lower() in digits:
        end += 1
    return sign * int(text[:end], base) if end else 0


def parse_default_route(proc_net_route: str) -> str:
    """The interface of the lowest-metric default route in /proc/net/route text, or ""."""
    best, best_metric = "", None
    for line in proc_net_route.split("\n")[1:]:  # the first line is the header
        fields = line.split()
        if len(fields) < 8:
            continue
        iface, destination, _gateway, flags, _refcnt, _use, metric, mask = fields[:8]
        if destination != "00000000" or mask != "00000000":
            continue
        if _strtol(flags, 16) & 0x1 == 0:  # RTF_UP
            continue
        value = _strtol(metric, 10)
        if best_metric is None or value < best_metric:
            best, best_metric = iface, value
    return best


def parse_default_route_v6(proc_net_ipv6_route: str) -> str:
    """The first default route's interface (not lo) in /proc/net/ipv6_route text, or ""."""
    for line in proc_net_ipv6_route.split("\n"):
        fields = line.split()
        if len(fields) < 10:
            continue
        dest, plen, iface = fields[0], fields[1], fields[9]
        if dest == "0" * 32 and plen == "00" and iface != "lo":
            return iface
    return ""
