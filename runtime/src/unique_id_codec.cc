#include "unique_id_codec.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "contract/unique_id.h"

namespace nccl_k8s {
namespace {

constexpr size_t kAddressOffset = sizeof(uint64_t);  // after the bootstrap magic

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string IdToHex(const IdBytes& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(id.size() * 2);
  for (unsigned char b : id) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::string IdToBase64(const IdBytes& id) {
  return contract::Base64Encode(std::string_view(reinterpret_cast<const char*>(id.data()), id.size()));
}

std::optional<IdBytes> IdFromHex(std::string_view hex) {
  if (hex.size() != kUniqueIdBytes * 2) return std::nullopt;
  IdBytes id{};
  for (size_t i = 0; i < id.size(); ++i) {
    int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    id[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return id;
}

std::optional<IdBytes> IdFromBase64(std::string_view text) {
  std::optional<std::string> bytes = contract::DecodeUniqueId(text);
  if (!bytes) return std::nullopt;
  IdBytes id{};
  std::memcpy(id.data(), bytes->data(), id.size());
  return id;
}

std::optional<BootstrapAddress> DecodeBootstrapAddress(const IdBytes& id) {
  const unsigned char* at = id.data() + kAddressOffset;
  sa_family_t family;
  std::memcpy(&family, at, sizeof family);
  char text[INET6_ADDRSTRLEN] = {};
  BootstrapAddress out;
  if (family == AF_INET) {
    sockaddr_in sin;
    std::memcpy(&sin, at, sizeof sin);
    if (!inet_ntop(AF_INET, &sin.sin_addr, text, sizeof text)) return std::nullopt;
    out.port = ntohs(sin.sin_port);
  } else if (family == AF_INET6) {
    sockaddr_in6 sin6;
    std::memcpy(&sin6, at, sizeof sin6);
    if (!inet_ntop(AF_INET6, &sin6.sin6_addr, text, sizeof text)) return std::nullopt;
    out.port = ntohs(sin6.sin6_port);
  } else {
    return std::nullopt;
  }
  out.family = family;
  out.ip = text;
  return out;
}

}  // namespace nccl_k8s
