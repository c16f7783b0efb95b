#include "policy/success_policy.h"

namespace ncclop::policy {

bool AttemptSucceeded(const observed::AttemptView& attempt) {
  int done = 0;
  for (const auto& [index, pod] : attempt.by_index) done += pod->trainer_succeeded && !pod->failed;
  return done == attempt.replicas;
}

}  // namespace ncclop::policy
