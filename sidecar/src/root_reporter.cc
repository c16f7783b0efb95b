#include "root_reporter.h"

#include "id_annotation.h"
#include "kube/backoff.h"
#include "logging/log.h"

namespace sidecar {
namespace {

constexpr char kComponent[] = "sidecar.report";

}  // namespace

RootReporter::RootReporter(std::shared_ptr<kube::Client> client, const Config& config,
                           std::function<void()> on_reported)
    : client_(std::move(client)), config_(config), on_reported_(std::move(on_reported)) {}

RootReporter::~RootReporter() { Stop(); }

void RootReporter::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void RootReporter::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

void RootReporter::Report(int64_t attempt, const std::string& raw_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = Pending{attempt, raw_id};
  }
  wake_.notify_all();
}

bool RootReporter::WaitReported(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return wake_.wait_for(lock, timeout, [this] { return !pending_.has_value(); });
}

bool RootReporter::Reported(int64_t attempt, const std::string& raw_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return reported_ && reported_->attempt == attempt && reported_->raw_id == raw_id;
}

RecalledId RootReporter::Recall(int64_t attempt) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!read_back_) return {};
  if (reported_ && reported_->attempt == attempt) return {true, reported_->raw_id};
  return {true, std::nullopt};
}

bool RootReporter::ReadBackOnce() {
  kube::Result<nlohmann::json> pod = client_->Get(kube::resources::kPods, config_.name_space, config_.pod_name);
  std::optional<std::string> id;
  if (pod.ok()) {
    id = IdAnnotatedFor(*pod, config_.attempt);
  } else if (pod.status().IsNotFound() || pod.status().IsForbidden()) {
    // Nothing to read (no pod of this name, or a Role without get): a POST is not held up for it.
    logging::Warn(kComponent, "cannot read the root pod's id annotations; an id it carries is not known",
                  {{"pod", config_.pod_name}, {"error", pod.status().ToString()}});
  } else {
    logging::Warn(kComponent, "could not read the root pod; retrying",
                  {{"pod", config_.pod_name}, {"error", pod.status().ToString()}});
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  read_back_ = true;
  if (id && !reported_) {
    reported_ = Pending{config_.attempt, *id};
    logging::Info(kComponent, "the root pod already carries the id of this attempt (this sidecar was restarted)",
                  {{"pod", config_.pod_name}, {"attempt", std::to_string(config_.attempt)}});
  }
  return true;
}

bool RootReporter::PatchOnce(const Pending& pending) {
  kube::Result<nlohmann::json> pod =
      client_->Patch(kube::resources::kPods, config_.name_space, config_.pod_name, kube::PatchType::kMerge,
                     BuildIdAnnotationPatch(pending.attempt, pending.raw_id));
  if (!pod.ok()) {
    logging::Warn(kComponent, "could not annotate the root pod; retrying",
                  {{"pod", config_.pod_name}, {"attempt", std::to_string(pending.attempt)},
                   {"error", pod.status().ToString()}});
    return false;
  }
  if (!PodHasIdAnnotation(*pod, pending.attempt, pending.raw_id)) {
    logging::Warn(kComponent, "the patched pod does not show the id annotations; retrying",
                  {{"pod", config_.pod_name}});
    return false;
  }
  return true;
}

void RootReporter::Run(std::stop_token stop) {
  kube::Backoff backoff(kube::BackoffPolicy{std::chrono::milliseconds(200), std::chrono::milliseconds(10000), 2.0, 0.5});
  while (!ReadBackOnce()) {
    if (!kube::SleepFor(backoff.Next(), stop)) return;
  }
  backoff.Reset();
  if (on_reported_) on_reported_();  // a POST answered 503 meanwhile may be posted again at once
  while (!stop.stop_requested()) {
    Pending pending;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!wake_.wait(lock, stop, [this] { return pending_.has_value(); })) return;
      pending = *pending_;
    }
    if (PatchOnce(pending)) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        reported_ = pending;
        // A newer Report() may have arrived while we patched; then go round again.
        if (pending_ && pending_->attempt == pending.attempt && pending_->raw_id == pending.raw_id) {
          pending_.reset();
          logging::Info(kComponent, "annotated the root pod with the id",
                        {{"pod", config_.pod_name}, {"attempt", std::to_string(pending.attempt)}});
        }
      }
      wake_.notify_all();  // WaitReported
      if (on_reported_) on_reported_();
      backoff.Reset();
      continue;
    }
    if (!kube::SleepFor(backoff.Next(), stop)) return;
  }
}

}  // namespace sidecar
