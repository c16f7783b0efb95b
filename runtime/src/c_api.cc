// The C API: a thin shell over the C++ one that turns Status into codes + a thread-local message.
#include "nccl_k8s/nccl_k8s.h"

#include <cstring>
#include <string>

#include "contract/names.h"
#include "nccl_k8s/progress.h"
#include "nccl_k8s/runtime.h"

struct nccl_k8s_comms {
  nccl_k8s::Communicators comms;
};

namespace {

thread_local std::string g_last_error;

int Fail(const nccl_k8s::Status& status) {
  g_last_error = status.ToString();
  return static_cast<int>(status.code());
}

int Ok() {
  g_last_error.clear();
  return NCCL_K8S_OK;
}

std::chrono::milliseconds TimeoutOr(long timeout_ms, const nccl_k8s::JobEnv& env) {
  if (timeout_ms > 0) return std::chrono::milliseconds(timeout_ms);
  return std::chrono::duration_cast<std::chrono::milliseconds>(env.init_timeout);
}

static_assert(static_cast<int>(nccl_k8s::Code::kInvalidArgument) == NCCL_K8S_INVALID_ARGUMENT,
              "C codes mirror nccl_k8s::Code");

}  // namespace

extern "C" {

const char* nccl_k8s_last_error(void) { return g_last_error.c_str(); }

int nccl_k8s_configure_socket_ifname(void) {
  auto env = nccl_k8s::ReadJobEnv();
  nccl_k8s::JobEnv fallback;  // without the contract there is no pod IP, but a default route may do
  nccl_k8s::ConfigureSocketIfname(env.ok() ? *env : fallback);
  return Ok();
}

int nccl_k8s_get_unique_id(unsigned char out[NCCL_K8S_ID_BYTES], long timeout_ms) {
  if (out == nullptr) return Fail({nccl_k8s::Code::kInvalidArgument, "out is NULL"});
  auto env = nccl_k8s::ReadJobEnv();
  if (!env.ok()) return Fail(env.status());
  auto id = nccl_k8s::ObtainUniqueId(*env, nccl_k8s::Clock::now() + TimeoutOr(timeout_ms, *env));
  if (!id.ok()) return Fail(id.status());
  std::memcpy(out, id->internal, NCCL_K8S_ID_BYTES);
  return Ok();
}

int nccl_k8s_get_unique_ids(unsigned char* out, int max_ids, int* n_ids, long timeout_ms) {
  if (out == nullptr || n_ids == nullptr) return Fail({nccl_k8s::Code::kInvalidArgument, "out or n_ids is NULL"});
  auto env = nccl_k8s::ReadJobEnv();
  if (!env.ok()) return Fail(env.status());
  if (max_ids < env->bootstrap_roots) {
    return Fail({nccl_k8s::Code::kInvalidArgument, "max_ids is " + std::to_string(max_ids) + ", the job has " +
                                                       std::to_string(env->bootstrap_roots) +
                                                       " bootstrap roots (NCCLJOB_BOOTSTRAP_ROOTS)"});
  }
  auto ids = nccl_k8s::ObtainUniqueIds(*env, nccl_k8s::Clock::now() + TimeoutOr(timeout_ms, *env));
  if (!ids.ok()) return Fail(ids.status());
  for (size_t i = 0; i < ids->size(); ++i) std::memcpy(out + i * NCCL_K8S_ID_BYTES, (*ids)[i].internal, NCCL_K8S_ID_BYTES);
  *n_ids = static_cast<int>(ids->size());
  return Ok();
}

int nccl_k8s_init(const int* devices, int n_devices, long timeout_ms, nccl_k8s_comms_t** out) {
  if (out == nullptr) return Fail({nccl_k8s::Code::kInvalidArgument, "out is NULL"});
  *out = nullptr;
  nccl_k8s::CommOptions options;
  if (devices != nullptr) options.devices.assign(devices, devices + n_devices);
  options.timeout = std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms : 0);
  auto comms = nccl_k8s::Init(options);
  if (!comms.ok()) return Fail(comms.status());
  *out = new nccl_k8s_comms{std::move(*comms)};
  return Ok();
}

int nccl_k8s_local_count(const nccl_k8s_comms_t* comms) { return comms ? comms->comms.local_count() : 0; }
int nccl_k8s_world_size(const nccl_k8s_comms_t* comms) { return comms ? comms->comms.world_size() : 0; }
int nccl_k8s_is_blocking(const nccl_k8s_comms_t* comms) { return comms && comms->comms.blocking() ? 1 : 0; }

int nccl_k8s_comm(const nccl_k8s_comms_t* comms, int local, ncclComm_t* comm, int* rank) {
  if (comms == nullptr || local < 0 || local >= comms->comms.local_count()) {
    return Fail({nccl_k8s::Code::kInvalidArgument, "no local communicator " + std::to_string(local)});
  }
  if (comm) *comm = comms->comms.comm(local);
  if (rank) *rank = comms->comms.rank(local);
  return Ok();
}

int nccl_k8s_wait_ready(nccl_k8s_comms_t* comms, long timeout_ms) {
  if (comms == nullptr) return Fail({nccl_k8s::Code::kInvalidArgument, "comms is NULL"});
  auto status = comms->comms.WaitReady(std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms : 60000));
  return status.ok() ? Ok() : Fail(status);
}

int nccl_k8s_destroy(nccl_k8s_comms_t* comms) {
  if (comms == nullptr) return Ok();
  auto status = comms->comms.Destroy();
  delete comms;
  return status.ok() ? Ok() : Fail(status);
}

void nccl_k8s_abort(nccl_k8s_comms_t* comms) {
  if (comms == nullptr) return;
  comms->comms.Abort();
  delete comms;
}

int nccl_k8s_report_progress(int64_t step, int64_t total, const char* const* names, const double* values, int count) {
  if (step < 0 || count < 0 || (count > 0 && (names == nullptr || values == nullptr))) {
    return Fail({nccl_k8s::Code::kInvalidArgument, "step and count must be >= 0, and names and values given for count > 0"});
  }
  nccl_k8s::Metric metrics[contract::kProgressMaxMetrics];
  int kept = 0;
  for (int i = 0; i < count && kept < contract::kProgressMaxMetrics; ++i) {
    if (names[i] != nullptr) metrics[kept++] = {names[i], values[i]};
  }
  nccl_k8s::ReportProgress(step, total >= 0 ? std::optional<int64_t>(total) : std::nullopt,
                           std::span<const nccl_k8s::Metric>(metrics, kept));
  return Ok();
}

int nccl_k8s_report_progress_done(void) {
  nccl_k8s::ReportProgressDone();
  return Ok();
}

}  // extern "C"
