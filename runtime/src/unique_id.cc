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

Result<ncclUniqueId> ObtainUniqueId(const JobEnv& env, Deadline deadline) {
  ConfigureSocketIfname(env);  // before NCCL's first call, which reads NCCL_SOCKET_IFNAME
  std::string attempt = std::to_string(env.attempt);
  if (env.is_root()) {
    ncclUniqueId id;
    ncclResult_t rc = ncclGetUniqueId(&id);
    if (rc != ncclSuccess) {
      return Status(Code::kNccl, std::string("ncclGetUniqueId failed: ") + ncclGetErrorString(rc) +
                                     " (" + ncclGetLastError(nullptr) +
                                     "); check NCCL_SOCKET_IFNAME and that the interface has an address");
    }
    IdBytes bytes = ToBytes(id);
    if (auto where = DecodeBootstrapAddress(bytes)) {
      log::Info("root id created", {{"attempt", attempt}, {"bootstrap", where->ip + ":" + std::to_string(where->port)}});
    }
    Status posted = PostId(env.sidecar_url, bytes, env.attempt, deadline);
    if (!posted.ok()) return posted;
    log::Info("root id handed to the sidecar", {{"attempt", attempt}});
    return id;
  }
  auto started = Clock::now();
  auto bytes = FetchId(env.sidecar_url, env.attempt, deadline);
  if (!bytes.ok()) return bytes.status();
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  log::Info("id received from the sidecar", {{"attempt", attempt}, {"waited_ms", std::to_string(waited.count())}});
  return FromBytes(*bytes);
}

}  // namespace nccl_k8s
