// Leader election on a coordination.k8s.io/v1 Lease (the protocol client-go uses, so it
// interoperates with other implementations): acquire when the lease is free or expired,
// renew every retry_period, step down when renewal has failed for renew_deadline, and clear
// holderIdentity on a clean shutdown so a successor need not wait out the lease.
// Every lease call carries a timeout that ends it before renew_deadline, so a hung API
// server cannot keep a leader acting past the point where another may take over.
// Expiry is judged on this process's monotonic clock from when it last saw the lease change,
// never by comparing wall clocks across machines.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "kube/client.h"

namespace kube {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per process, e.g. "<pod name>_<random>"
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  // Called on the elector's thread: must return quickly (start workers, do not run them).
  std::function<void()> on_started_leading;
  // Called once after leading ends (lost or released). Usual reaction: exit the process.
  std::function<void()> on_stopped_leading;
  // Called when the observed leader changes (including to this process).
  std::function<void(const std::string& identity)> on_new_leader;
};

class LeaderElector {
 public:
  LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config);

  // Tries to acquire until `stop`; then renews until renewal fails past renew_deadline or
  // `stop` (then releases the lease). Returns after leadership ended or stop; never throws.
  // Returns OK when stopped, or the Status of the failure that made it step down.
  Status Run(std::stop_token stop);

  bool IsLeader() const { return leading_.load(); }
  std::string LeaderIdentity() const;

 private:
  // How a lease call's Timeout message names the deadline it ran into.
  std::string RenewDeadlineName() const;
  enum class Attempt { kAcquired, kHeldByOther, kError };
  // Every API call of one attempt ends by `deadline` (or when `stop` is requested).
  Attempt TryAcquireOrRenew(Status* error, std::chrono::steady_clock::time_point deadline, std::stop_token stop);
  bool Release();
  void ObserveLeader(const std::string& holder);

  std::shared_ptr<Client> client_;
  LeaderElectionConfig config_;
  std::atomic<bool> leading_{false};
  mutable std::mutex mu_;
  std::string observed_holder_;          // guarded by mu_
  std::string observed_record_;          // guarded by mu_: holder+renewTime+transitions
  std::chrono::steady_clock::time_point observed_at_;  // guarded by mu_
  std::string lease_resource_version_;   // guarded by mu_
};

}  // namespace kube
