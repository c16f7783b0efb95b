"""What this process's network namespace looks like (the I/O half of socket_ifname.py), and
``configure_socket_ifname``, the one place in Python that writes NCCL_SOCKET_IFNAME."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import socket
import threading
from typing import List, Optional

from .job_env import JobEnv
from .socket_ifname import (USER, IfnameChoice, InterfaceAddress, choose_socket_ifname, parse_default_route,
                            parse_default_route_v6)

_log = logging.getLogger("nccl_k8s")
_IFF_UP = 0x1


class _IfAddrs(ctypes.Structure):
    pass


_IfAddrs._fields_ = [  # struct ifaddrs (glibc); only the fields up to ifa_addr are read
    ("ifa_next", ctypes.POINTER(_IfAddrs)),
    ("ifa_name", ctypes.c_char_p),
    ("ifa_flags", ctypes.c_uint),
    ("ifa_addr", ctypes.c_void_p),
    ("ifa_netmask", ctypes.c_void_p),
    ("ifa_ifu", ctypes.c_void_p),
    ("ifa_data", ctypes.c_void_p),
]


def _address_text(sockaddr: int) -> Optional[str]:
    family = ctypes.c_ushort.from_address(sockaddr).value
    if family == socket.AF_INET:  # sockaddr_in: family, port, 4-byte address at offset 4
        return socket.inet_ntop(socket.AF_INET, ctypes.string_at(sockaddr + 4, 4))
    if family == socket.AF_INET6:  # sockaddr_in6: family, port, flowinfo, 16-byte address at offset 8
        return socket.inet_ntop(socket.AF_INET6, ctypes.string_at(sockaddr + 8, 16))
    return None


def list_interfaces() -> List[InterfaceAddress]:
    """Every IPv4/IPv6 address of every interface that is up (libc's getifaddrs, as the runtime)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    head = ctypes.POINTER(_IfAddrs)()
    if libc.getifaddrs(ctypes.byref(head)) != 0:
        return []
    out = []
    try:
        it = head
        while it:
            entry = it.contents
            if entry.ifa_addr and entry.ifa_flags & _IFF_UP:
                ip = _address_text(entry.ifa_addr)
                if ip is not None:
                    out.append(InterfaceAddress(entry.ifa_name.decode(errors="replace"), ip))
            it = entry.ifa_next
    finally:
        libc.freeifaddrs(head)
    return out


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def default_route_interface() -> str:
    """The default route's interface from /proc/net/route (IPv4), then /proc/net/ipv6_route; "" if none."""
    return parse_default_route(_read("/proc/net/route")) or parse_default_route_v6(_read("/proc/net/ipv6_route"))


_lock = threading.Lock()
_choice: Optional[IfnameChoice] = None


def configure_socket_ifname(env: JobEnv) -> IfnameChoice:
    """Sets NCCL_SOCKET_IFNAME unless the user set it, like the runtime's ConfigureSocketIfname.

    Call it before the process's first NCCL call (NCCL reads the variable once); ``unique_id`` and
    the framework helpers call it for you. The first decision stands for the whole process: later
    calls return it, since deciding again could only disagree with what NCCL already uses.
    """
    global _choice
    with _lock:
        if _choice is None:
            choice = choose_socket_ifname(os.environ.get("NCCL_SOCKET_IFNAME"), env.pod_ip, list_interfaces(),
                                          default_route_interface())
            if choice.source != USER and choice.value:
                os.environ["NCCL_SOCKET_IFNAME"] = choice.value
            for warning in choice.warnings:
                _log.warning(warning)
            _log.info("NCCL_SOCKET_IFNAME chosen: %s (source %s)", choice.value, choice.source)
            _choice = choice
        return _choice
