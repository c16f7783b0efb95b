// The watch protocol: the server streams one JSON object per line,
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}. Lines arrive split at
// any byte and several per chunk; the decoder keeps only the unfinished tail and parses each
// line once.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/json_skim.h"
#include "kube/status.h"

namespace kube {

enum class EventType { kAdded, kModified, kDeleted, kBookmark, kError };
const char* EventTypeName(EventType t);

struct WatchEvent {
  EventType type = EventType::kAdded;
  nlohmann::json object;  // the object; for kError a metav1.Status

  // object.metadata.resourceVersion ("" when absent).
  std::string ResourceVersion() const;
  // For kError: the Status the server sent (IsGone() for an expired resourceVersion).
  Status ErrorStatus() const;
};

class WatchDecoder {
 public:
  // A line longer than this is an error (protects memory from a broken stream).
  static constexpr std::size_t kDefaultMaxLineBytes = 64u << 20;
  explicit WatchDecoder(std::size_t max_line_bytes = kDefaultMaxLineBytes);
  // Members of each event's object never parsed (json_skim.h), e.g. {"spec"}, {"metadata",
  // "managedFields"}: paths from the object.
  WatchDecoder(std::size_t max_line_bytes, std::vector<MemberPath> drop_from_objects);

  // Called once per complete line: an event, or a Status with reason "DecodeError" for a
  // line that is not a valid event (the decoder then carries on with the next line).
  using Sink = std::function<void(Result<WatchEvent>&&)>;

  void Feed(std::string_view chunk, const Sink& sink);
  // Bytes held for an unfinished line.
  std::size_t buffered() const { return pending_.size(); }
  void Reset() { pending_.clear(); }

 private:
  void DecodeLine(std::string_view line, const Sink& sink);

  std::size_t max_line_bytes_;
  std::vector<MemberPath> drop_;  // from the event: {"object", ...}
  std::string pending_;
  bool skipping_oversized_ = false;
};

// Decodes one line (exposed for tests and benchmarks), without the members at `drop` (paths from
// the event: {"object", "spec"}).
Result<WatchEvent> DecodeWatchLine(std::string_view line, const std::vector<MemberPath>& drop = {});

}  // namespace kube
