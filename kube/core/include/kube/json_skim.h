// Dropping members of a JSON text before it is parsed. Parsing is the cost of a watch event: a
// pod as served is ~12 KB, of which its spec and metadata.managedFields are ~85 %, and a
// controller that never reads them paid for building and freeing them on every event (the
// operator's largest per-pod cost at 4096 pods after its per-reconcile parse was gone;
// bench/scale/RESULTS.md, D). Skipping bytes is several times cheaper than parsing them.
// Pure (no I/O).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kube {

// A member path from the root object: {"object", "metadata", "managedFields"}.
using MemberPath = std::vector<std::string>;

// "metadata.managedFields" -> {"metadata", "managedFields"} (keys hold no dot).
MemberPath ParseMemberPath(std::string_view dotted);

// `text` (one JSON value) without the members at `paths` (absent ones are no matter), with the
// whitespace between tokens of the kept parts of the objects on a path removed; everything
// else is copied byte for byte. nullopt when the text is not well-formed where it was read
// (the caller parses the whole text then, to report the error as before). Keys are compared as
// written: a key spelled with escapes does not match.
std::optional<std::string> DropMembers(std::string_view text, const std::vector<MemberPath>& paths);

}  // namespace kube
