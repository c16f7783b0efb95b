#include "root_id_slot.h"

namespace sidecar {

AcceptOutcome RootIdSlot::Accept(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!id_) {
    id_ = id;
    return AcceptOutcome::kAccepted;
  }
  return *id_ == id ? AcceptOutcome::kAlreadyAccepted : AcceptOutcome::kConflict;
}

void RootIdSlot::Restore(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!id_) id_ = id;
}

std::optional<std::string> RootIdSlot::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return id_;
}

}  // namespace sidecar
