// Where the id comes from: the one thing the sidecar's modes differ in. Every source feeds the
// board the trainers' GET /v1/id polls read (id_board.h), says when the probes may call the
// sidecar ready, and takes the id a root's trainer POSTs (api_server.h). One implementation per
// mode, picked from the Config (PickIdSource below, built by make_id_source.h):
//   configmap_id_source.h        Kubernetes: the job's ConfigMap; a root reports onto its pod
//   standalone_root_id_source.h  --standalone, the one root: what its trainer posts
//   peer_id_source.h             --standalone otherwise: the root sidecar(s) over HTTP
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "config.h"

namespace sidecar {

// What an earlier run of this sidecar kept for an attempt (a restarted sidecar reads it back).
struct RecalledId {
  bool read = false;              // false: not read yet (the API server is away)
  std::optional<std::string> id;  // the id kept for the attempt, if any
};

// A root keeps the id its trainer POSTed so that it outlives this process: on its pod's
// annotations in Kubernetes mode, on the board in standalone mode. The POST is answered 200 only
// once Kept() says so; a sidecar killed before that leaves the POST unanswered, and the trainer
// POSTs the same id again to the restarted sidecar (docs/contracts.md).
class IdSource {
 public:
  virtual ~IdSource() = default;

  virtual void Start() = 0;  // after the servers started; feeds the board on its own threads
  // In place (--in-place-state; Kubernetes mode only), before Start(): feeds the board the
  // attempts the ConfigMap names while this pod waits to learn which one it serves
  // (served_attempt.h). Start() then starts the rest; Ready() stays false until then.
  virtual void WatchAttempts() {}
  // After the stop signal, before the board closes (waiting polls are still answered meanwhile):
  // returns once nothing a trainer handed over would be lost by stopping, or it gave up.
  virtual void Drain() {}
  virtual void Stop() = 0;  // joins the threads Start() began
  virtual bool Ready() const = 0;  // /readyz: the source has been reached

  // A root's trainer POSTed `id` of `attempt`: called once per accepted id (not for a repeated
  // POST of the same id). Must not block.
  virtual void Keep(int64_t attempt, const std::string& id) = 0;
  // True once `id` of `attempt` is kept. A source that keeps at once keeps the default.
  virtual bool Kept(int64_t /*attempt*/, const std::string& /*id*/) const { return true; }
  // What an earlier run of this sidecar kept for `attempt`: a POST is answered 503 until it is
  // read, then a different id 409, the same one 200. The default: nothing outlives the process.
  virtual RecalledId Recall(int64_t /*attempt*/) const { return {.read = true, .id = std::nullopt}; }
  // `on_kept` (nullptr: none) runs on the source's thread whenever Kept() or Recall() may answer
  // differently, so that waiting POSTs are asked again; it must not block. Once this returns, a
  // call of the previous one has finished. Sources that keep at once never call it.
  virtual void SetOnKept(std::function<void()> /*on_kept*/) {}
};

// The modes, one per implementation (the two Kubernetes kinds share the ConfigMap source).
enum class IdSourceKind {
  kConfigMap,        // Kubernetes, a pod that makes no id: watches the job's ConfigMap
  kConfigMapRoot,    // Kubernetes, a bootstrap root's pod: watches it and reports its trainer's id onto its pod
  kStandaloneRoot,   // --standalone, the job's one root: serves what its trainer posts
  kRootSidecar,      // --standalone, one root, another pod: long-polls the root sidecar (--peer-url)
  kRootSidecars,     // --standalone, several roots, every pod: gathers each root sidecar's id (--root-urls)
};

// Pure: which source a sidecar of `config` runs (ParseConfig has checked the flags fit it).
IdSourceKind PickIdSource(const Config& config);

}  // namespace sidecar
