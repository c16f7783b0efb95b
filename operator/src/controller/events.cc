#include "controller/events.h"

#include <chrono>
#include <cstdio>

#include "contract/names.h"
#include "logging/log.h"
#include "observed/ownership.h"

namespace ncclop::controller {
namespace {

std::string EventName(const std::string& job) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(api::Clock::now().time_since_epoch()).count();
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(ns));
  return job + "." + hex;
}

}  // namespace

void EventRecorder::Record(const api::NcclJob& job, const policy::Event& event) {
  const std::string now = api::FormatTime(api::Clock::now());
  logging::Info("controller", event.message,
                {{"job", observed::JobKey(job.namespace_, job.name)}, {"reason", event.reason}, {"type", event.type}});
  const EventRepeats::Key key{job.uid, event.type, event.reason, event.message};
  if (BumpRepeat(job, key, now)) return;
  nlohmann::json object = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      // Named <job>.<time in hex ns>, as the kubelet names its events: a list (sorted by name)
      // then shows them in the order they happened, which second-resolution timestamps cannot.
      {"metadata", {{"name", EventName(job.name)}, {"namespace", job.namespace_}}},
      {"involvedObject",
       {{"apiVersion", contract::kApiVersion}, {"kind", contract::kKind}, {"name", job.name}, {"namespace", job.namespace_},
        {"uid", job.uid}}},
      {"reason", event.reason},
      {"message", event.message},
      {"type", event.type},
      {"source", {{"component", "nccl-operator"}}},
      {"reportingComponent", "nccl.dev/nccl-operator"},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1}};
  auto created = client_->Create(kube::resources::kCoreEvents, job.namespace_, object);
  if (created.status().IsAlreadyExists()) {  // two in one nanosecond: let the server pick a name
    object["metadata"].erase("name");
    object["metadata"]["generateName"] = job.name + ".";
    created = client_->Create(kube::resources::kCoreEvents, job.namespace_, object);
  }
  if (!created.ok()) {
    metrics_->EventDropped();
    logging::Warn("controller", "could not write an Event",
                  {{"job", observed::JobKey(job.namespace_, job.name)}, {"error", created.status().ToString()}});
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  written_.Put(key, {(*created)["metadata"].value("name", ""), 1}, EventRepeats::Clock::now());
}

bool EventRecorder::BumpRepeat(const api::NcclJob& job, const EventRepeats::Key& key, const std::string& now) {
  std::optional<EventRepeats::Written> written;
  {
    std::lock_guard<std::mutex> lock(mu_);
    written = written_.Find(key, EventRepeats::Clock::now());
  }
  if (!written) return false;
  const int count = written->count + 1;
  auto patched = client_->Patch(kube::resources::kCoreEvents, job.namespace_, written->name, kube::PatchType::kMerge,
                                {{"count", count}, {"lastTimestamp", now}});
  std::lock_guard<std::mutex> lock(mu_);
  if (!patched.ok()) {  // gone (events expire) or unreachable: write a new one
    written_.Erase(key);
    return false;
  }
  written_.Put(key, {written->name, count}, EventRepeats::Clock::now());
  return true;
}

}  // namespace ncclop::controller
