// The id's wire form: the 128 bytes of an ncclUniqueId as standard base64 (RFC 4648, padded),
// in the root pod's annotation, the ConfigMap and the sidecar's JSON. One strict codec for all
// three parts: a corrupted value is refused, never turned into a different id. Header-only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace contract {

inline constexpr std::size_t kUniqueIdBytes = 128;  // sizeof(ncclUniqueId)
// A job of several bootstrap roots carries its ids as one text, root order: "<id0>,<id1>,..."
// (the ConfigMap's uniqueId; base64 has no comma, so one id is the list of one).
inline constexpr char kIdListSeparator = ',';

namespace base64_internal {
inline constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
inline constexpr int kInvalid = -1;
constexpr std::array<int, 256> MakeReverse() {
  std::array<int, 256> table{};
  for (auto& v : table) v = kInvalid;
  for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = i;
  return table;
}
inline constexpr std::array<int, 256> kReverse = MakeReverse();
}  // namespace base64_internal

inline std::string Base64Encode(std::string_view bytes) {
  using base64_internal::kAlphabet;
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

// Strict: the padded alphabet only, length a multiple of 4, padding only at the very end and
// zero bits under it (one text per byte string).
inline std::optional<std::string> Base64Decode(std::string_view text) {
  using base64_internal::kInvalid;
  using base64_internal::kReverse;
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    uint32_t n = 0;
    for (int k = 0; k < 4; ++k) {
      int v = 0;
      if (k < 4 - pad) {
        v = kReverse[static_cast<unsigned char>(text[i + k])];
        if (v == kInvalid) return std::nullopt;
      }
      n = (n << 6) | static_cast<uint32_t>(v);
    }
    // The bits under the padding must be zero: else two texts would decode to one id, and a
    // corrupted one would be read as a different id instead of being refused.
    if ((pad == 1 && (n & 0xff) != 0) || (pad == 2 && (n & 0xffff) != 0)) return std::nullopt;
    out += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

// The id's text form: base64 of exactly kUniqueIdBytes; nullopt for anything else.
inline std::optional<std::string> DecodeUniqueId(std::string_view text) {
  std::optional<std::string> raw = Base64Decode(text);
  if (!raw || raw->size() != kUniqueIdBytes) return std::nullopt;
  return raw;
}

}  // namespace contract
