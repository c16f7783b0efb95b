// Kubernetes mode: every sidecar watches its job's ConfigMap (configmap_watch.h) and is ready
// once it was listed. A bootstrap root's sidecar also reports its trainer's id onto its own pod
// (root_reporter.h), where the operator reads it; the POST is answered once the id is there.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "config.h"
#include "configmap_watch.h"
#include "id_board.h"
#include "id_source.h"
#include "kube/client.h"
#include "root_reporter.h"

namespace sidecar {

class ConfigMapIdSource : public IdSource {
 public:
  // `report`: this pod is a bootstrap root, whose trainer posts an id.
  ConfigMapIdSource(std::shared_ptr<kube::Client> client, const Config& config, IdBoard& board, bool report);
  ~ConfigMapIdSource() override;

  void Start() override;
  void WatchAttempts() override;
  void Drain() override;
  void Stop() override;
  bool Ready() const override { return started_ && watch_.ready(); }

  void Keep(int64_t attempt, const std::string& id) override;
  bool Kept(int64_t attempt, const std::string& id) const override;
  RecalledId Recall(int64_t attempt) const override;
  void SetOnKept(std::function<void()> on_kept) override;

 private:
  void OnReported();

  const Config& config_;
  std::mutex on_kept_mu_;                   // held while on_kept_ runs
  std::function<void()> on_kept_;           // guarded by on_kept_mu_
  ConfigMapWatch watch_;
  bool watching_ = false;                   // main() only (WatchAttempts, Start)
  std::atomic<bool> started_{false};        // Start() ran: the pod's attempt is known
  std::unique_ptr<RootReporter> reporter_;  // null on a pod that makes no id; calls OnReported
};

}  // namespace sidecar
