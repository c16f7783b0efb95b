// The watch decoder on bytes from the API server, cut anywhere. Property: the events and decode
// errors are the same whether the stream arrives whole, one byte at a time, or in the chunks the
// input picks; and the decoder never holds more than its line limit.
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "kube/watch.h"

namespace {

std::string Describe(kube::Result<kube::WatchEvent>&& result) {
  if (!result.ok()) return "error " + result.status().reason() + ": " + result.status().message();
  return std::string(kube::EventTypeName(result->type)) + " " +
         result->object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::string> Decode(std::string_view stream, const std::vector<std::size_t>& chunk_sizes,
                                std::size_t max_line) {
  kube::WatchDecoder decoder(max_line);
  std::vector<std::string> events;
  auto sink = [&](kube::Result<kube::WatchEvent>&& r) { events.push_back(Describe(std::move(r))); };
  std::size_t next = 0;
  while (!stream.empty()) {
    std::size_t n = chunk_sizes.empty() ? stream.size() : chunk_sizes[next++ % chunk_sizes.size()];
    n = std::min(std::max<std::size_t>(n, 1), stream.size());
    decoder.Feed(stream.substr(0, n), sink);
    if (decoder.buffered() > max_line) std::abort();  // the limit protects memory
    stream.remove_prefix(n);
  }
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const std::size_t max_line = in.ConsumeIntegralInRange<std::size_t>(1, 4096);
  std::vector<std::size_t> chunks(in.ConsumeIntegralInRange<std::size_t>(1, 8));
  for (auto& c : chunks) c = in.ConsumeIntegralInRange<std::size_t>(1, 64);
  const std::string stream = in.ConsumeRemainingBytesAsString();

  const auto whole = Decode(stream, {}, max_line);
  if (Decode(stream, {1}, max_line) != whole) std::abort();
  if (Decode(stream, chunks, max_line) != whole) std::abort();
  return 0;
}
