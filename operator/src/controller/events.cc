#include "controller/events.h"

#include "api/names.h"
#include "logging/log.h"

namespace ncclop::controller {

void EventRecorder::Record(const api::NcclJob& job, const policy::Event& event) {
  const std::string now = api::FormatTime(api::Clock::now());
  nlohmann::json object = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"generateName", job.name + "."}, {"namespace", job.namespace_}}},
      {"involvedObject",
       {{"apiVersion", api::kApiVersion}, {"kind", api::kKind}, {"name", job.name}, {"namespace", job.namespace_},
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
  logging::Info("controller", event.message,
                {{"job", job.namespace_ + "/" + job.name}, {"reason", event.reason}, {"type", event.type}});
  if (!created.ok()) {
    metrics_->EventDropped();
    logging::Warn("controller", "could not write an Event",
                  {{"job", job.namespace_ + "/" + job.name}, {"error", created.status().ToString()}});
  }
}

}  // namespace ncclop::controller
