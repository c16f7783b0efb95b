#include <cstring>
#include <optional>

#include "kube/watch.h"

namespace kube {
namespace {

bool ParseType(std::string_view s, EventType* out) {
  if (s == "ADDED") *out = EventType::kAdded;
  else if (s == "MODIFIED") *out = EventType::kModified;
  else if (s == "DELETED") *out = EventType::kDeleted;
  else if (s == "BOOKMARK") *out = EventType::kBookmark;
  else if (s == "ERROR") *out = EventType::kError;
  else return false;
  return true;
}

std::string_view TrimCr(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  return line;
}

Status OversizedLine(std::size_t max_line_bytes) {
  return Status::Local("DecodeError", "watch event larger than " + std::to_string(max_line_bytes) + " bytes");
}

}  // namespace

const char* EventTypeName(EventType t) {
  switch (t) {
    case EventType::kAdded: return "ADDED";
    case EventType::kModified: return "MODIFIED";
    case EventType::kDeleted: return "DELETED";
    case EventType::kBookmark: return "BOOKMARK";
    case EventType::kError: return "ERROR";
  }
  return "UNKNOWN";
}

std::string WatchEvent::ResourceVersion() const {
  if (!object.is_object()) return {};
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return {};
  auto rv = md->find("resourceVersion");
  return rv != md->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

Status WatchEvent::ErrorStatus() const {
  if (type != EventType::kError) return Status::Ok();
  long code = 0;
  if (object.is_object()) {
    if (auto c = object.find("code"); c != object.end() && c->is_number_integer()) {
      code = c->get<long>();
    }
  }
  Status s = Status::FromResponse(code == 0 ? 500 : code, object.dump());
  return s;
}

Result<WatchEvent> DecodeWatchLine(std::string_view line, const std::vector<MemberPath>& drop) {
  std::optional<std::string> skimmed;
  if (!drop.empty()) skimmed = DropMembers(line, drop);  // not well-formed: parsed whole, for the error
  auto j = nlohmann::json::parse(skimmed ? std::string_view(*skimmed) : line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    constexpr std::size_t kShown = 120;
    return Status::Local("DecodeError", "watch event is not a JSON object: " +
                                            std::string(line.substr(0, kShown)));
  }
  WatchEvent event;
  auto type = j.find("type");
  if (type == j.end() || !type->is_string() ||
      !ParseType(type->get_ref<const std::string&>(), &event.type)) {
    return Status::Local("DecodeError", "watch event has no known \"type\"");
  }
  auto object = j.find("object");
  if (object == j.end() || !object->is_object()) {
    return Status::Local("DecodeError", "watch event has no \"object\"");
  }
  event.object = std::move(*object);
  return event;
}

WatchDecoder::WatchDecoder(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

WatchDecoder::WatchDecoder(std::size_t max_line_bytes, std::vector<MemberPath> drop_from_objects)
    : max_line_bytes_(max_line_bytes) {
  for (MemberPath& path : drop_from_objects) {
    if (path.empty()) continue;
    path.insert(path.begin(), "object");
    drop_.push_back(std::move(path));
  }
}

void WatchDecoder::DecodeLine(std::string_view line, const Sink& sink) {
  line = TrimCr(line);
  if (line.empty()) return;  // keep-alive blank lines
  sink(DecodeWatchLine(line, drop_));
}

void WatchDecoder::Feed(std::string_view chunk, const Sink& sink) {
  while (!chunk.empty()) {
    const void* nl = std::memchr(chunk.data(), '\n', chunk.size());
    if (nl == nullptr) {
      if (skipping_oversized_) return;
      if (pending_.size() + chunk.size() > max_line_bytes_) {
        pending_.clear();
        skipping_oversized_ = true;
        sink(OversizedLine(max_line_bytes_));
        return;
      }
      pending_.append(chunk);
      return;
    }
    const std::size_t len = static_cast<const char*>(nl) - chunk.data();
    if (skipping_oversized_) {
      skipping_oversized_ = false;
    } else if (pending_.size() + len > max_line_bytes_) {
      // The same verdict as when the line arrives without its newline (above), so where the
      // stream was cut never changes the events.
      pending_.clear();
      sink(OversizedLine(max_line_bytes_));
    } else if (pending_.empty()) {
      // Whole line inside this chunk: decode straight from it, no copy.
      DecodeLine(chunk.substr(0, len), sink);
    } else {
      pending_.append(chunk.substr(0, len));
      DecodeLine(pending_, sink);
      pending_.clear();
    }
    chunk.remove_prefix(len + 1);
  }
}

}  // namespace kube
