// Every sidecar in a cluster: watches its job's one ConfigMap (fieldSelector on the name, the
// only one its Role lets it read) and puts each attempt/id it shows on the board. The informer
// relists on 410 Gone and reconnects with backoff; ready() turns true once the first list
// succeeded.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "config.h"
#include "id_board.h"
#include "kube/client.h"
#include "kube/informer.h"

namespace sidecar {

class ConfigMapWatch {
 public:
  ConfigMapWatch(std::shared_ptr<kube::Client> client, const Config& config, IdBoard& board);
  // `pod_attempt`: the attempt this pod serves, for the log lines; 0 while it is not known yet
  // (in place: the board's attempts decide it, served_attempt.h).
  void Start(int64_t pod_attempt);
  void SetPodAttempt(int64_t pod_attempt) { pod_attempt_ = pod_attempt; }
  void Stop();
  bool ready() const { return informer_.HasSynced(); }

 private:
  void OnConfigMap(const nlohmann::json& config_map);

  const Config& config_;
  IdBoard& board_;
  kube::Informer informer_;
  std::atomic<int64_t> pod_attempt_{0};
  int64_t last_logged_attempt_ = 0;  // informer thread only
  bool last_logged_published_ = false;
};

}  // namespace sidecar
