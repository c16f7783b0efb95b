// The root sidecar accepts one id per attempt from its trainer. A retry of the same id is
// harmless (the trainer may not have seen our first answer); a different id for the same
// attempt means two roots or a confused trainer, and must not silently replace the first.
#pragma once

#include <mutex>
#include <optional>
#include <string>

namespace sidecar {

enum class AcceptOutcome { kAccepted, kAlreadyAccepted, kConflict };

class RootIdSlot {
 public:
  AcceptOutcome Accept(const std::string& id);
  // The id an earlier run of this sidecar accepted for the attempt (read back from the pod): held
  // as if accepted here, unless one is held already.
  void Restore(const std::string& id);
  std::optional<std::string> Get() const;

 private:
  mutable std::mutex mu_;
  std::optional<std::string> id_;  // guarded by mu_
};

}  // namespace sidecar
