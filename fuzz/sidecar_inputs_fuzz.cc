// The sidecar's untrusted inputs, one per first byte: a POST /v1/id body with its Content-Type,
// the long-poll's ?timeout=, the job's ConfigMap, its own pod (annotations), and its env + flags.
// Properties: an accepted id is exactly 128 bytes of this pod's attempt; a poll timeout is within
// [0, max]; a ConfigMap view never carries a foreign job UID or a short id; after the annotation
// patch is merged into any pod, the pod has the annotation; an accepted config is self-consistent.
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "config.h"
#include "id_annotation.h"
#include "id_configmap.h"
#include "id_request.h"

namespace {

void PostBody(fuzz::Input& in) {
  const int64_t pod_attempt = in.ConsumeIntegralInRange<int64_t>(1, 5);
  const std::string content_type = in.ConsumeRandomLengthString(40);
  const std::string body = in.ConsumeRemainingBytesAsString();
  auto parsed = sidecar::ParsePostBody(content_type, body, pod_attempt);
  if (auto* posted = std::get_if<sidecar::PostedId>(&parsed)) {
    if (posted->id.size() != sidecar::kUniqueIdBytes) std::abort();
    if (posted->attempt && *posted->attempt != pod_attempt) std::abort();
  } else {
    const auto& error = std::get<sidecar::HttpError>(parsed);
    if (error.status < 400 || error.status > 499 || error.message.empty()) std::abort();
  }
}

void PollTimeout(fuzz::Input& in) {
  const bool present = in.ConsumeBool();
  const std::string value = in.ConsumeRemainingBytesAsString();
  auto parsed = sidecar::ParsePollTimeout(present ? std::optional<std::string_view>(value) : std::nullopt);
  if (auto* t = std::get_if<std::chrono::seconds>(&parsed)) {
    if (t->count() < 0 || *t > sidecar::kMaxPollTimeout) std::abort();
  }
}

void ConfigMap(fuzz::Input& in) {
  const std::string expected_uid = in.ConsumeRandomLengthString(16);
  auto cm = nlohmann::json::parse(in.ConsumeRemainingBytesAsString(), nullptr, false);
  if (cm.is_discarded()) return;
  std::string why;
  auto view = sidecar::ReadIdConfigMap(cm, expected_uid, &why);
  if (!view) return;
  if (!expected_uid.empty() && view->job_uid != expected_uid) std::abort();
  if (view->id && view->id->size() != sidecar::kUniqueIdBytes) std::abort();
}

void Annotation(fuzz::Input& in) {
  const int64_t attempt = in.ConsumeIntegral<int64_t>();
  const std::string id = in.ConsumeBytesAsString(sidecar::kUniqueIdBytes);
  auto pod = nlohmann::json::parse(in.ConsumeRemainingBytesAsString(), nullptr, false);
  if (pod.is_discarded() || !pod.is_object()) return;
  (void)sidecar::PodHasIdAnnotation(pod, attempt, id);
  pod.merge_patch(sidecar::BuildIdAnnotationPatch(attempt, id));
  if (!sidecar::PodHasIdAnnotation(pod, attempt, id)) std::abort();
}

void Config(fuzz::Input& in) {
  std::map<std::string, std::string, std::less<>> env;
  static const char* kNames[] = {"NCCLJOB_NAME", "NCCLJOB_NAMESPACE", "NCCLJOB_UID", "NCCLJOB_INDEX",
                                 "NCCLJOB_REPLICAS", "NCCLJOB_GPUS_PER_POD", "NCCLJOB_ATTEMPT",
                                 "NCCLJOB_WORLD_SIZE", "NCCLJOB_POD_NAME"};
  for (const char* name : kNames) {
    if (in.ConsumeBool()) env[name] = in.ConsumeRandomLengthString(24);
  }
  std::vector<std::string> args{"nccl-sidecar"};
  while (in.remaining_bytes() > 0 && args.size() < 12) args.push_back(in.ConsumeRandomLengthString(48));
  auto parsed = sidecar::ParseConfig(args, [&](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
  if (auto* c = std::get_if<sidecar::Config>(&parsed)) {
    if (c->job.empty() || c->replicas < 1 || c->index < 0 || c->index >= c->replicas || c->attempt < 1) std::abort();
    if (c->listen.port < 0 || c->listen.port > 65535 || c->probe_listen.port < 0 || c->probe_listen.port > 65535) {
      std::abort();
    }
  } else if (auto* e = std::get_if<sidecar::ConfigError>(&parsed)) {
    if (e->message.empty()) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: PostBody(in); break;
    case 1: PollTimeout(in); break;
    case 2: ConfigMap(in); break;
    case 3: Annotation(in); break;
    case 4: Config(in); break;
  }
  return 0;
}
