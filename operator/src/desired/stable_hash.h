// FNV-1a hashes for names and ports derived from a job: stable across builds, machines and
// releases (std::hash is none of these), so what an operator derived is found again by the next.
#pragma once

#include <cstdint>
#include <string_view>

namespace ncclop::desired {

inline std::uint32_t Fnv1a32(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

inline std::uint64_t Fnv1a64(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace ncclop::desired
