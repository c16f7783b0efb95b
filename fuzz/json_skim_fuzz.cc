// kube::DropMembers (the watch decoder's skim of members a watcher never reads) on any text.
// Properties: where the text is one well-formed JSON value, DropMembers returns a text, and that
// text parses to the same value with the members at the paths dropped, everything else equal;
// a key spelled with escapes is compared as written (json_skim.h), so such a member may stay,
// and then only it differs. On text that is not JSON it only must not crash.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "kube/json_skim.h"

namespace {

using Json = nlohmann::json;

Json Without(Json j, const std::vector<kube::MemberPath>& paths) {
  for (const kube::MemberPath& p : paths) {
    Json* at = &j;
    for (std::size_t i = 0; i + 1 < p.size() && at != nullptr; ++i) {
      if (!at->is_object()) {
        at = nullptr;
        break;
      }
      auto it = at->find(p[i]);
      at = it != at->end() && it->is_object() ? &*it : nullptr;
    }
    if (at != nullptr && at->is_object()) at->erase(p.back());
  }
  return j;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  // The paths the operator drops, one that is usually absent, and one at the root.
  static const std::vector<kube::MemberPath> kAll = {
      kube::ParseMemberPath("object.spec"), kube::ParseMemberPath("object.metadata.managedFields"),
      kube::ParseMemberPath("object.absent.deeper"), kube::ParseMemberPath("spec")};
  std::vector<kube::MemberPath> paths;
  const auto pick = in.ConsumeIntegral<std::uint8_t>();
  for (std::size_t i = 0; i < kAll.size(); ++i) {
    if (pick & (1u << i)) paths.push_back(kAll[i]);
  }
  const std::string text = in.ConsumeRemainingBytesAsString();

  const auto skimmed = kube::DropMembers(text, paths);
  // nlohmann's parser takes a NUL byte for the end of its input (it accepts `1\0garbage`);
  // DropMembers reads the whole text, as the API server's JSON is. Only NUL-free text is compared.
  if (text.find('\0') != std::string::npos) return 0;
  const Json whole = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (whole.is_discarded()) return 0;  // not JSON: only "no crash" holds
  if (!skimmed) std::abort();           // well-formed text is always skimmed
  const Json kept = Json::parse(*skimmed, nullptr, /*allow_exceptions=*/false);
  if (kept.is_discarded()) std::abort();
  if (Without(kept, paths) != Without(whole, paths)) std::abort();
  return 0;
}
