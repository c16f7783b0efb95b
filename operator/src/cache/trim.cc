#include "cache/trim.h"

#include <initializer_list>
#include <string_view>

namespace ncclop::cache {
namespace {

using Json = nlohmann::json;

// Moves the listed keys of `from` (when present) into a fresh object.
Json Pick(Json& from, std::initializer_list<const char*> keys) {
  Json out = Json::object();
  if (!from.is_object()) return out;
  for (const char* key : keys) {
    auto it = from.find(key);
    if (it != from.end()) out[key] = std::move(*it);
  }
  return out;
}

// A string field, or "" when absent or of another kind (a pod is never trusted to be well-formed).
std::string StringField(const Json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Json TrimContainerStatuses(Json& statuses) {
  Json out = Json::array();
  if (!statuses.is_array()) return out;
  for (Json& cs : statuses) {
    Json kept = Pick(cs, {"name", "ready", "restartCount"});
    auto state = cs.find("state");
    if (state != cs.end() && state->is_object()) {
      auto terminated = state->find("terminated");
      // message: the trainer's last output when it failed (terminationMessagePolicy), for events.
      if (terminated != state->end()) kept["state"]["terminated"] = Pick(*terminated, {"exitCode", "reason", "message"});
      // Why a container does not start (ErrImagePull, CreateContainerError, ...), for the job's status.
      auto waiting = state->find("waiting");
      if (waiting != state->end()) kept["state"]["waiting"] = Pick(*waiting, {"reason", "message"});
    }
    // How the container ended before its last restart in place (observed/pod.h).
    auto last = cs.find("lastState");
    if (last != cs.end() && last->is_object()) {
      auto terminated = last->find("terminated");
      if (terminated != last->end()) kept["lastState"]["terminated"] = Pick(*terminated, {"exitCode", "reason", "message"});
    }
    out.push_back(std::move(kept));
  }
  return out;
}

// The metadata both trims keep.
Json PickOwnership(Json& metadata) {
  return Pick(metadata, {"name", "namespace", "uid", "resourceVersion", "labels", "ownerReferences", "deletionTimestamp"});
}

}  // namespace

void TrimToOwnership(Json& object) {
  if (!object.is_object()) return;
  Json out = Pick(object, {"apiVersion", "kind"});
  if (auto md = object.find("metadata"); md != object.end() && md->is_object()) out["metadata"] = PickOwnership(*md);
  object = std::move(out);
}

void TrimNode(Json& node) {
  if (!node.is_object()) return;
  Json out = Pick(node, {"apiVersion", "kind"});
  if (auto md = node.find("metadata"); md != node.end() && md->is_object()) out["metadata"] = Pick(*md, {"name", "resourceVersion"});
  if (auto spec = node.find("spec"); spec != node.end() && spec->is_object()) {
    Json kept = Pick(*spec, {"unschedulable"});
    if (!kept.empty()) out["spec"] = std::move(kept);
  }
  if (auto st = node.find("status"); st != node.end() && st->is_object()) {
    Json kept = Pick(*st, {"declaredFeatures"});
    if (!kept.empty()) out["status"] = std::move(kept);
  }
  node = std::move(out);
}

void TrimPod(Json& pod) {
  if (!pod.is_object()) return;
  Json out = Pick(pod, {"apiVersion", "kind"});

  if (auto md = pod.find("metadata"); md != pod.end() && md->is_object()) {
    Json meta = PickOwnership(*md);
    if (auto ann = md->find("annotations"); ann != md->end() && ann->is_object()) {
      Json kept = Json::object();
      for (auto it = ann->begin(); it != ann->end(); ++it) {
        if (std::string_view(it.key()).starts_with("nccl.dev/")) kept[it.key()] = std::move(it.value());
      }
      if (!kept.empty()) meta["annotations"] = std::move(kept);
    }
    out["metadata"] = std::move(meta);
  }

  if (auto st = pod.find("status"); st != pod.end() && st->is_object()) {
    Json status = Pick(*st, {"phase", "reason", "message"});
    if (auto conds = st->find("conditions"); conds != st->end() && conds->is_array()) {
      Json kept = Json::array();
      for (Json& c : *conds) {
        // DisruptionTarget's reason says who ended the pod (observed/disruption.h); PodScheduled
        // False carries the scheduler's verdict on a pod it cannot place (policy/start_policy.h).
        // No other condition's words are read, so they are not kept.
        const std::string type = StringField(c, "type");
        if (type == "DisruptionTarget") {
          kept.push_back(Pick(c, {"type", "status", "reason"}));
        } else if (type == "PodScheduled" && StringField(c, "status") == "False") {
          kept.push_back(Pick(c, {"type", "status", "reason", "message"}));
        } else {
          kept.push_back(Pick(c, {"type", "status"}));
        }
      }
      status["conditions"] = std::move(kept);
    }
    for (const char* key : {"containerStatuses", "initContainerStatuses"}) {
      if (auto cs = st->find(key); cs != st->end()) status[key] = TrimContainerStatuses(*cs);
    }
    out["status"] = std::move(status);
  }
  pod = std::move(out);
}

}  // namespace ncclop::cache
