#include "progress_annotator.h"

#include <chrono>

#include "contract/names.h"
#include "kube/backoff.h"
#include "logging/log.h"
#include "pod_annotations.h"

namespace sidecar {
namespace {

constexpr char kComponent[] = "sidecar.progress";
// How often the board is looked at; a patch still waits out the annotation's interval. Short,
// so that the first report of an attempt shows within a second.
constexpr std::chrono::milliseconds kLook{1000};

}  // namespace

std::string ProgressAnnotationValue(const RankProgress& newest, int64_t attempt) {
  nlohmann::json value = ProgressJson(newest);
  value[contract::kFieldAttempt] = attempt;
  return value.dump();
}

ProgressAnnotator::ProgressAnnotator(std::shared_ptr<kube::Client> client, const Config& config,
                                     const ProgressBoard& board)
    : client_(std::move(client)), config_(config), board_(board) {}

void ProgressAnnotator::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void ProgressAnnotator::Stop() { thread_ = std::jthread(); }  // the old thread is asked to stop and joined

void ProgressAnnotator::Run(std::stop_token stop) {
  using Clock = std::chrono::steady_clock;
  constexpr std::chrono::seconds kInterval{contract::kProgressAnnotationSeconds};
  std::string written;  // the value on the pod
  std::optional<Clock::time_point> last_try;
  bool failing = false;
  while (kube::SleepFor(kLook, stop)) {
    if (last_try && Clock::now() - *last_try < kInterval) continue;
    std::optional<RankProgress> newest = board_.Newest();
    if (!newest) continue;
    std::string value = ProgressAnnotationValue(*newest, config_.attempt);
    if (value == written) continue;
    last_try = Clock::now();
    if (Patch(value, &failing)) written = std::move(value);
  }
}

bool ProgressAnnotator::Patch(const std::string& value, bool* failing) {
  kube::Result<nlohmann::json> pod =
      client_->Patch(kube::resources::kPods, config_.name_space, config_.pod_name, kube::PatchType::kMerge,
                     AnnotationPatch({{contract::kAnnotationProgress, value}}));
  if (!pod.ok()) {
    const logging::Fields fields = {{"pod", config_.pod_name}, {"error", pod.status().ToString()}};
    if (*failing) {
      logging::Debug(kComponent, "still cannot put the progress on the pod", fields);
    } else {
      logging::Warn(kComponent, "could not put the progress on the pod; trying again at the next interval", fields);
    }
    *failing = true;
    return false;
  }
  if (*failing) logging::Info(kComponent, "put the progress on the pod again", {{"pod", config_.pod_name}});
  *failing = false;
  patches_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace sidecar
