// Splits one fuzz input into several values, the way libFuzzer's FuzzedDataProvider does (the
// same bytes give the same values, so corpora stay valid under either): integers are taken
// from the end of the input, strings from the front. Written here so that the targets also
// build with the default compiler as replay tests (fuzz/replay_main.cc), where clang's header
// is not installed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace fuzz {

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::size_t remaining_bytes() const { return size_; }

  // A value in [min, max] from up to sizeof(T) bytes read backwards from the end; min when
  // no bytes are left.
  template <typename T>
  T ConsumeIntegralInRange(T min, T max) {
    static_assert(std::is_integral_v<T> && sizeof(T) <= sizeof(std::uint64_t));
    if (min > max) return min;  // a programming error in a target; keep it harmless
    const std::uint64_t range = static_cast<std::uint64_t>(max) - static_cast<std::uint64_t>(min);
    std::uint64_t value = 0;
    for (std::size_t shift = 0; shift < sizeof(T) * 8 && (range >> shift) > 0 && size_ > 0; shift += 8) {
      --size_;
      value = (value << 8) | data_[size_];
    }
    if (range != std::numeric_limits<std::uint64_t>::max()) value %= range + 1;
    return static_cast<T>(static_cast<std::uint64_t>(min) + value);
  }

  template <typename T>
  T ConsumeIntegral() {
    return ConsumeIntegralInRange(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  }

  bool ConsumeBool() { return (ConsumeIntegral<std::uint8_t>() & 1) != 0; }

  // Up to n bytes from the front.
  std::string ConsumeBytesAsString(std::size_t n) {
    n = std::min(n, size_);
    std::string out(reinterpret_cast<const char*>(data_), n);
    Advance(n);
    return out;
  }

  std::string ConsumeRemainingBytesAsString() { return ConsumeBytesAsString(size_); }

  // Bytes from the front up to max_length of them; a backslash followed by anything but a
  // second backslash ends the string (both bytes consumed), "\\" stands for one backslash.
  std::string ConsumeRandomLengthString(std::size_t max_length) {
    std::string out;
    for (std::size_t i = 0; i < max_length && size_ > 0; ++i) {
      char c = static_cast<char>(data_[0]);
      Advance(1);
      if (c == '\\' && size_ > 0) {
        c = static_cast<char>(data_[0]);
        Advance(1);
        if (c != '\\') break;
      }
      out += c;
    }
    return out;
  }

  std::string ConsumeRandomLengthString() { return ConsumeRandomLengthString(size_); }

 private:
  void Advance(std::size_t n) {
    data_ += n;
    size_ -= n;
  }

  const std::uint8_t* data_;
  std::size_t size_;
};

}  // namespace fuzz
