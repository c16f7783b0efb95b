// FNV-1a hashes for names and ports derived from a job: stable across builds, machines and
// releases (std::hash is none of these), so what an operator derived is found again by the next.
#pragma once

#include <cstdint>
#include <string_view>

namespace ncclop::desired {

// FNV-1a over `s` with the width's offset basis and prime.
template <typename Word, Word kOffsetBasis, Word kPrime>
constexpr Word Fnv1a(std::string_view s) {
  Word h = kOffsetBasis;
  for (unsigned char c : s) {
    h ^= c;
    h *= kPrime;
  }
  return h;
}

inline std::uint32_t Fnv1a32(std::string_view s) { return Fnv1a<std::uint32_t, 2166136261u, 16777619u>(s); }

inline std::uint64_t Fnv1a64(std::string_view s) {
  return Fnv1a<std::uint64_t, 14695981039346656037ull, 1099511628211ull>(s);
}

}  // namespace ncclop::desired
