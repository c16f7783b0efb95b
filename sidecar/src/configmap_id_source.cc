#include "configmap_id_source.h"

#include <chrono>
#include <string>
#include <utility>

#include "logging/log.h"

namespace sidecar {
namespace {

// The stop sequence's lines carry the process's component, as the rest of it does.
constexpr char kComponent[] = "sidecar";
// How long a stopping root sidecar keeps trying to put a posted id on its pod.
constexpr std::chrono::seconds kReportGrace{20};

}  // namespace

ConfigMapIdSource::ConfigMapIdSource(std::shared_ptr<kube::Client> client, const Config& config, IdBoard& board,
                                     bool report)
    : config_(config), watch_(client, config, board) {
  if (report) reporter_ = std::make_unique<RootReporter>(std::move(client), config, [this] { OnReported(); });
}

ConfigMapIdSource::~ConfigMapIdSource() { Stop(); }

void ConfigMapIdSource::Start() {
  if (reporter_) reporter_->Start();  // reads back the id its pod carries for config.attempt first
  if (watching_) {
    watch_.SetPodAttempt(config_.attempt);
  } else {
    watch_.Start(config_.attempt);
    watching_ = true;
  }
  started_ = true;
}

void ConfigMapIdSource::WatchAttempts() {
  if (watching_) return;
  watch_.Start(/*pod_attempt=*/0);
  watching_ = true;
}

void ConfigMapIdSource::Drain() {
  // The kubelet stops a native sidecar when the pod's trainer has ended. Our trainers wait for
  // the POST's answer, which comes once the id is on the pod; a trainer that gave up waiting
  // (or a client that does not wait) would otherwise take the attempt's id with it while the
  // API server was away. Keep reporting within the pod's grace period (default 30 s).
  if (!reporter_ || reporter_->WaitReported(std::chrono::milliseconds(0))) return;
  logging::Info(kComponent, "the id is not on the pod yet; still reporting it before stopping",
                {{"up_to_seconds", std::to_string(kReportGrace.count())}});
  if (!reporter_->WaitReported(kReportGrace)) {
    logging::Warn(kComponent, "stopping with the id not on the pod; the attempt cannot start");
  }
}

void ConfigMapIdSource::Stop() {
  watch_.Stop();
  if (reporter_) reporter_->Stop();
}

void ConfigMapIdSource::Keep(int64_t attempt, const std::string& id) {
  if (reporter_) reporter_->Report(attempt, id);
}

bool ConfigMapIdSource::Kept(int64_t attempt, const std::string& id) const {
  return !reporter_ || reporter_->Reported(attempt, id);
}

RecalledId ConfigMapIdSource::Recall(int64_t attempt) const {
  if (!reporter_) return IdSource::Recall(attempt);
  return reporter_->Recall(attempt);
}

void ConfigMapIdSource::SetOnKept(std::function<void()> on_kept) {
  std::lock_guard<std::mutex> lock(on_kept_mu_);
  on_kept_ = std::move(on_kept);
}

void ConfigMapIdSource::OnReported() {
  std::lock_guard<std::mutex> lock(on_kept_mu_);
  if (on_kept_) on_kept_();
}

}  // namespace sidecar
