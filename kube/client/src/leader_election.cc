#include "kube/leader_election.h"

#include <ctime>
#include <random>

#include "logging/log.h"

namespace kube {
namespace {

// metav1.MicroTime: RFC 3339 with microseconds, UTC.
std::string MicroTimeNow() {
  const auto now = std::chrono::system_clock::now();
  const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(now);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now - secs).count();
  std::time_t t = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  char out[80];
  std::snprintf(out, sizeof(out), "%s.%06lldZ", buf, static_cast<long long>(micros));
  return out;
}

std::string SpecString(const Json& spec, const char* key) {
  auto it = spec.find(key);
  return it != spec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t SpecInt(const Json& spec, const char* key) {
  auto it = spec.find(key);
  return it != spec.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

// The remaining time before `deadline` as a call limit; at least 1 ms, since 0 means "none".
// `deadline_name` says in a Timeout message which deadline that was.
CallOptions Within(std::chrono::steady_clock::time_point deadline, std::stop_token stop,
                   const std::string& deadline_name) {
  CallOptions call;
  call.deadline_name = deadline_name;
  call.retry = false;  // the election loop is the retry
  call.stop = std::move(stop);
  call.timeout = std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                            deadline - std::chrono::steady_clock::now()));
  return call;
}

}  // namespace

LeaderElector::LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config)
    : client_(std::move(client)), config_(std::move(config)) {}

std::string LeaderElector::RenewDeadlineName() const {
  return "the lease's renew deadline (renew_deadline " + std::to_string(config_.renew_deadline.count()) + " ms)";
}

std::string LeaderElector::LeaderIdentity() const {
  std::lock_guard lock(mu_);
  return observed_holder_;
}

void LeaderElector::ObserveLeader(const std::string& holder) {
  bool changed;
  {
    std::lock_guard lock(mu_);
    changed = holder != observed_holder_;
    observed_holder_ = holder;
  }
  if (changed && !holder.empty() && config_.on_new_leader) config_.on_new_leader(holder);
}

LeaderElector::Attempt LeaderElector::TryAcquireOrRenew(Status* error, std::chrono::steady_clock::time_point deadline,
                                                        std::stop_token stop) {
  const Resource& r = resources::kLeases;
  const std::string path = ObjectPath(r, config_.lease_namespace, config_.lease_name);
  const auto lease_seconds =
      std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count());
  const std::string now_text = MicroTimeNow();
  const auto now = std::chrono::steady_clock::now();

  // Lease calls are not retried inside the client: the election loop is the retry, and a
  // renewal must not outlive renew_deadline inside a backoff or a hung request.
  auto got = client_->Request("GET", path, {}, {}, Within(deadline, stop, RenewDeadlineName()));
  if (!got.ok() && got.status().IsNotFound()) {
    Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}},
                  {"spec",
                   {{"holderIdentity", config_.identity},
                    {"leaseDurationSeconds", lease_seconds},
                    {"acquireTime", now_text},
                    {"renewTime", now_text},
                    {"leaseTransitions", 0}}}};
    auto created = client_->Request("POST", CollectionPath(r, config_.lease_namespace), lease.dump(),
                                    "application/json", Within(deadline, stop, RenewDeadlineName()));
    if (!created.ok()) {
      if (created.status().IsAlreadyExists()) return Attempt::kHeldByOther;
      *error = created.status();
      return Attempt::kError;
    }
    {
      std::lock_guard lock(mu_);
      observed_record_.clear();
      observed_at_ = now;
    }
    ObserveLeader(config_.identity);
    return Attempt::kAcquired;
  }
  if (!got.ok()) {
    *error = got.status();
    return Attempt::kError;
  }
  Json lease = Json::parse(got->body, nullptr, false);
  if (!lease.is_object()) {
    *error = Status::Local("DecodeError", "lease is not a JSON object");
    return Attempt::kError;
  }
  Json& spec = lease["spec"];
  if (!spec.is_object()) spec = Json::object();
  const std::string holder = SpecString(spec, "holderIdentity");
  const std::string record = holder + "|" + SpecString(spec, "renewTime") + "|" +
                             std::to_string(SpecInt(spec, "leaseTransitions"));
  std::int64_t their_duration = SpecInt(spec, "leaseDurationSeconds");
  if (their_duration <= 0) their_duration = lease_seconds;
  bool expired;
  {
    std::lock_guard lock(mu_);
    if (record != observed_record_) {
      observed_record_ = record;
      observed_at_ = now;
    }
    expired = now >= observed_at_ + std::chrono::seconds(their_duration);
  }
  ObserveLeader(holder);
  if (!holder.empty() && holder != config_.identity && !expired) return Attempt::kHeldByOther;

  if (holder != config_.identity) {
    spec["acquireTime"] = now_text;
    spec["leaseTransitions"] = SpecInt(spec, "leaseTransitions") + 1;
  }
  spec["holderIdentity"] = config_.identity;
  spec["leaseDurationSeconds"] = lease_seconds;
  spec["renewTime"] = now_text;
  // The resourceVersion from the GET makes this a compare-and-swap: a concurrent taker gets 409.
  auto updated =
      client_->Request("PUT", path, lease.dump(), "application/json", Within(deadline, stop, RenewDeadlineName()));
  if (!updated.ok()) {
    if (updated.status().IsConflict()) return Attempt::kHeldByOther;
    *error = updated.status();
    return Attempt::kError;
  }
  Json fresh = Json::parse(updated->body, nullptr, false);
  {
    std::lock_guard lock(mu_);
    if (fresh.is_object() && fresh["spec"].is_object()) {
      observed_record_ = SpecString(fresh["spec"], "holderIdentity") + "|" +
                         SpecString(fresh["spec"], "renewTime") + "|" +
                         std::to_string(SpecInt(fresh["spec"], "leaseTransitions"));
    }
    observed_at_ = now;
  }
  ObserveLeader(config_.identity);
  return Attempt::kAcquired;
}

bool LeaderElector::Release() {
  const std::string path = ObjectPath(resources::kLeases, config_.lease_namespace, config_.lease_name);
  // Called after stop was requested: bounded by the renew deadline, not by the stop token.
  const auto deadline = std::chrono::steady_clock::now() + config_.renew_deadline;
  auto got = client_->Request("GET", path, {}, {}, Within(deadline, {}, RenewDeadlineName()));
  if (!got.ok()) return false;
  Json lease = Json::parse(got->body, nullptr, false);
  if (!lease.is_object() || !lease["spec"].is_object()) return false;
  Json& spec = lease["spec"];
  if (SpecString(spec, "holderIdentity") != config_.identity) return false;
  // An empty holder lets the next candidate take the lease at once instead of waiting it out.
  spec["holderIdentity"] = "";
  spec["leaseDurationSeconds"] = 1;
  spec["renewTime"] = MicroTimeNow();
  auto updated =
      client_->Request("PUT", path, lease.dump(), "application/json", Within(deadline, {}, RenewDeadlineName()));
  return updated.ok();
}

Status LeaderElector::Run(std::stop_token stop) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(1.0, 1.2);
  auto retry_wait = [&] {
    return std::chrono::milliseconds(
        static_cast<std::int64_t>(static_cast<double>(config_.retry_period.count()) * jitter(rng)));
  };
  logging::Info("kube", "leader election: trying to acquire lease",
                {{"lease", config_.lease_namespace + "/" + config_.lease_name}, {"identity", config_.identity}});
  for (;;) {
    if (stop.stop_requested()) return Status::Ok();
    Status error;
    Attempt a = TryAcquireOrRenew(&error, std::chrono::steady_clock::now() + config_.renew_deadline, stop);
    if (stop.stop_requested()) return Status::Ok();
    if (a == Attempt::kAcquired) break;
    if (a == Attempt::kError) {
      logging::Warn("kube", "leader election: cannot read or write the lease",
                    {{"lease", config_.lease_name}, {"error", error.ToString()}});
    }
    if (!SleepFor(retry_wait(), stop)) return Status::Ok();
  }

  leading_.store(true);
  logging::Info("kube", "leader election: became leader",
                {{"lease", config_.lease_namespace + "/" + config_.lease_name}, {"identity", config_.identity}});
  if (config_.on_started_leading) config_.on_started_leading();

  Status result;
  auto last_renew = std::chrono::steady_clock::now();
  while (SleepFor(config_.retry_period, stop)) {
    Status error;
    Attempt a = TryAcquireOrRenew(&error, last_renew + config_.renew_deadline, stop);
    const auto now = std::chrono::steady_clock::now();
    if (a == Attempt::kAcquired) {
      last_renew = now;
      continue;
    }
    if (a == Attempt::kHeldByOther) {
      result = Status::Local("LeaderLost", "lease " + config_.lease_name + " was taken by " + LeaderIdentity());
      break;
    }
    if (stop.stop_requested()) break;  // a renewal cut short by shutdown is not a failure
    logging::Warn("kube", "leader election: renewal failed",
                  {{"lease", config_.lease_name}, {"error", error.ToString()}});
    // "Timeout": the call itself ran into last_renew + renew_deadline.
    if (now - last_renew >= config_.renew_deadline || error.reason() == "Timeout") {
      result = Status::Local("LeaderLost", "could not renew lease " + config_.lease_name + " within the renew deadline: " +
                                               error.ToString());
      break;
    }
  }
  leading_.store(false);
  if (stop.stop_requested() && result.ok()) {
    if (Release()) logging::Info("kube", "leader election: released lease", {{"lease", config_.lease_name}});
  } else {
    logging::Warn("kube", "leader election: stopped leading", {{"reason", result.ToString()}});
  }
  if (config_.on_stopped_leading) config_.on_stopped_leading();
  return result;
}

}  // namespace kube
