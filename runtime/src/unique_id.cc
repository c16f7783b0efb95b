// ObtainUniqueId: the root makes the id and hands it to its sidecar; everyone else asks theirs.
#include <cstring>

#include "log.h"
#include "nccl_k8s/runtime.h"
#include "sidecar_client.h"
#include "unique_id_codec.h"

namespace nccl_k8s {

namespace {

IdBytes ToBytes(const ncclUniqueId& id) {
  static_assert(sizeof(ncclUniqueId) == kUniqueIdBytes, "ncclUniqueId is 128 bytes");
  IdBytes bytes;
  std::memcpy(bytes.data(), id.internal, bytes.size());
  return bytes;
}

ncclUniqueId FromBytes(const IdBytes& bytes) {
  ncclUniqueId id;
  std::memcpy(id.internal, bytes.data(), bytes.size());
  return id;
}

}  // namespace

std::string EncodeIdHex(const ncclUniqueId& id) { return IdToHex(ToBytes(id)); }
std::string EncodeIdBase64(const ncclUniqueId& id) { return IdToBase64(ToBytes(id)); }

Result<int> ServedAttempt(const JobEnv& env, Deadline deadline) { return FetchAttempt(env.sidecar_url, deadline); }

Result<std::vector<ncclUniqueId>> ObtainUniqueIds(const JobEnv& env, Deadline deadline) {
  ConfigureSocketIfname(env);  // before NCCL's first call, which reads NCCL_SOCKET_IFNAME
  // The sidecar's attempt, not NCCLJOB_ATTEMPT: they differ once the pod was restarted in place.
  Result<int> served = ServedAttempt(env, deadline);
  if (!served.ok()) return served.status();
  const int attempt_number = *served;
  std::string attempt = std::to_string(attempt_number);
  log::Info("attempt learnt from the sidecar", {{"attempt", attempt}, {"NCCLJOB_ATTEMPT", std::to_string(env.attempt)}});
  const int slot = env.root_slot();
  if (slot >= 0) {
    ncclUniqueId id;
    ncclResult_t rc = ncclGetUniqueId(&id);
    if (rc != ncclSuccess) {
      return Status(Code::kNccl, std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(rc) +
                                     " (" + ncclGetLastError(nullptr) +
                                     "); check NCCL_SOCKET_IFNAME and that the interface has an address");
    }
    IdBytes bytes = ToBytes(id);
    if (auto where = DecodeBootstrapAddress(bytes)) {
      log::Info("root id created", {{"attempt", attempt}, {"root", std::to_string(slot)},
                                    {"bootstrap", where->ip + ":" + std::to_string(where->port)}});
    }
    Status posted = PostId(env.sidecar_url, bytes, attempt_number, deadline);
    if (!posted.ok()) return posted;
    log::Info("root id handed to the sidecar", {{"attempt", attempt}, {"root", std::to_string(slot)}});
    // With one root the list is this id; with several, the others' come through the sidecar.
    if (env.bootstrap_roots == 1) return std::vector<ncclUniqueId>{id};
  }
  auto started = Clock::now();
  auto list = FetchIds(env.sidecar_url, attempt_number, env.bootstrap_roots, deadline);
  if (!list.ok()) return list.status();
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  log::Info(list->size() == 1 ? "id received from the sidecar" : "ids received from the sidecar",
            {{"attempt", attempt}, {"ids", std::to_string(list->size())}, {"waited_ms", std::to_string(waited.count())}});
  std::vector<ncclUniqueId> ids;
  for (const IdBytes& bytes : *list) ids.push_back(FromBytes(bytes));
  return ids;
}

Result<ncclUniqueId> ObtainUniqueId(const JobEnv& env, Deadline deadline) {
  if (env.bootstrap_roots != 1) {
    return Status(Code::kInvalidArgument, "this job bootstraps from " + std::to_string(env.bootstrap_roots) +
                                              " roots (NCCLJOB_BOOTSTRAP_ROOTS): one id is not enough; use "
                                              "ObtainUniqueIds and ncclCommInitRankScalable (or Init)");
  }
  auto ids = ObtainUniqueIds(env, deadline);
  if (!ids.ok()) return ids.status();
  return ids->front();
}

}  // namespace nccl_k8s
