#include "base64.h"

#include <cstdint>

namespace nccl_k8s {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int Sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string Base64Encode(const unsigned char* data, size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    uint32_t chunk = uint32_t{data[i]} << 16;
    if (i + 1 < size) chunk |= uint32_t{data[i + 1]} << 8;
    if (i + 2 < size) chunk |= data[i + 2];
    out.push_back(kAlphabet[(chunk >> 18) & 63]);
    out.push_back(kAlphabet[(chunk >> 12) & 63]);
    out.push_back(i + 1 < size ? kAlphabet[(chunk >> 6) & 63] : '=');
    out.push_back(i + 2 < size ? kAlphabet[chunk & 63] : '=');
  }
  return out;
}

std::optional<std::vector<unsigned char>> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::vector<unsigned char> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int pad = 0;
    uint32_t chunk = 0;
    for (size_t j = 0; j < 4; ++j) {
      char c = text[i + j];
      int v;
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        v = 0;
        ++pad;
      } else {
        if (pad > 0) return std::nullopt;  // data after padding
        v = Sextet(c);
        if (v < 0) return std::nullopt;
      }
      chunk = (chunk << 6) | static_cast<uint32_t>(v);
    }
    // The bits under the padding must be zero, so each id has exactly one text (a corrupted
    // value is refused, never read as a different id).
    if ((pad == 1 && (chunk & 0xff) != 0) || (pad == 2 && (chunk & 0xffff) != 0)) return std::nullopt;
    out.push_back(static_cast<unsigned char>(chunk >> 16));
    if (pad < 2) out.push_back(static_cast<unsigned char>(chunk >> 8));
    if (pad < 1) out.push_back(static_cast<unsigned char>(chunk));
  }
  return out;
}

}  // namespace nccl_k8s
