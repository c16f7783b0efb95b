// The 128-byte ncclUniqueId as text, and what NCCL's bootstrap writes into it. NCCL's bootstrap
// handle starts with a 64-bit magic followed by the root's socket address (a sockaddr_in or
// sockaddr_in6, as the OS lays it out); the rest is zero. Knowing this lets tests check which
// interface the root listens on, and lets tools print where the root is without logging the id.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "contract/unique_id.h"

namespace nccl_k8s {

using contract::kUniqueIdBytes;
using IdBytes = std::array<unsigned char, kUniqueIdBytes>;

std::string IdToHex(const IdBytes& id);
std::string IdToBase64(const IdBytes& id);
std::optional<IdBytes> IdFromHex(std::string_view hex);
std::optional<IdBytes> IdFromBase64(std::string_view text);

struct BootstrapAddress {
  int family = 0;          // AF_INET or AF_INET6
  std::string ip;          // numeric form
  uint16_t port = 0;
};

// nullopt when the bytes hold no IPv4/IPv6 socket address where NCCL puts it.
std::optional<BootstrapAddress> DecodeBootstrapAddress(const IdBytes& id);

}  // namespace nccl_k8s
