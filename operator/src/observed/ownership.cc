#include "observed/ownership.h"

#include "contract/names.h"
#include "observed/fields.h"

namespace ncclop::observed {

std::string JobKey(std::string_view name_space, std::string_view name) {
  return std::string(name_space) + "/" + std::string(name);
}

std::string OwningJobKey(const nlohmann::json& child) {
  const nlohmann::json& md = Metadata(child);
  const std::string job = StringField(ObjectField(md, "labels"), contract::kLabelJobName);
  return job.empty() ? std::string() : JobKey(StringField(md, "namespace"), job);
}

bool OwnedBy(const nlohmann::json& object, std::string_view uid) {
  for (const nlohmann::json& ref : ArrayField(Metadata(object), "ownerReferences")) {
    if (StringField(ref, "uid") == uid) return true;
  }
  return false;
}

}  // namespace ncclop::observed
