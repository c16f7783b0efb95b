"""The 128-byte ncclUniqueId as bytes, and what NCCL's bootstrap writes into it.

NCCL's bootstrap handle is a 64-bit magic followed by the root's socket address (a sockaddr_in or
sockaddr_in6 as the OS lays it out); the rest is zero (runtime/src/unique_id_codec.h says the
same for C++). Reading that address tells every rank where the root is without DNS.
"""

from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass
from typing import Iterable, Optional, Union

from .errors import InvalidArgumentError

UNIQUE_ID_BYTES = 128
_ADDRESS_OFFSET = 8  # after the bootstrap magic

IdLike = Union[bytes, bytearray, memoryview, Iterable[int]]


@dataclass(frozen=True)
class BootstrapAddress:
    """Where the root listens: ``family`` (socket.AF_INET/AF_INET6), numeric ``ip``, ``port``."""

    family: int
    ip: str
    port: int


def as_id_bytes(value: IdLike) -> bytes:
    """128 bytes from what frameworks hand out: bytes, or a sequence of ints such as
    ``cupy.cuda.nccl.get_unique_id()`` (signed chars, -128..127). Raises InvalidArgumentError."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    else:
        try:
            data = bytes(int(b) & 0xFF for b in value)
        except (TypeError, ValueError) as err:
            raise InvalidArgumentError(f"an id is 128 bytes or 128 integers, got {type(value).__name__}") from err
    if len(data) != UNIQUE_ID_BYTES:
        raise InvalidArgumentError(f"the id must be exactly {UNIQUE_ID_BYTES} bytes (ncclUniqueId), got {len(data)}")
    return data


def bootstrap_address(unique_id: bytes) -> Optional[BootstrapAddress]:
    """The root's address inside the id; None when the bytes hold no IPv4/IPv6 socket address."""
    if len(unique_id) != UNIQUE_ID_BYTES:
        return None
    at = _ADDRESS_OFFSET
    (family,) = struct.unpack_from("=H", unique_id, at)  # sa_family_t, host byte order
    (port,) = struct.unpack_from("!H", unique_id, at + 2)
    if family == socket.AF_INET:
        return BootstrapAddress(family, socket.inet_ntop(socket.AF_INET, unique_id[at + 4:at + 8]), port)
    if family == socket.AF_INET6:
        return BootstrapAddress(family, socket.inet_ntop(socket.AF_INET6, unique_id[at + 8:at + 24]), port)
    return None


def address_id(ip: str, port: int) -> bytes:
    """An id in the layout of NCCL's bootstrap handle that names ``ip:port``, with a fresh random
    magic. For frameworks that rendezvous by address (PyTorch's TCPStore) rather than by an NCCL
    id: the root posts it, every rank reads the root's IP from it (:func:`bootstrap_address`)."""
    if not 0 < port < 65536:
        raise InvalidArgumentError(f"port {port} is not in 1..65535")
    try:
        packed = socket.inet_pton(socket.AF_INET, ip)
        sockaddr = struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + packed + bytes(8)
    except OSError:
        try:
            packed = socket.inet_pton(socket.AF_INET6, ip)
        except OSError as err:
            raise InvalidArgumentError(f"'{ip}' is not a numeric IPv4 or IPv6 address") from err
        sockaddr = struct.pack("=H", socket.AF_INET6) + struct.pack("!H", port) + bytes(4) + packed + bytes(4)
    data = os.urandom(_ADDRESS_OFFSET) + sockaddr
    return data + bytes(UNIQUE_ID_BYTES - len(data))
