#include "api/kueue_topology.h"

#include <charconv>
#include <set>
#include <string_view>

#include "api/label_key.h"
#include "contract/names.h"

namespace ncclop::api {
namespace {

using Json = nlohmann::json;

kube::Status Invalid(std::string_view annotation, const std::string& what) {
  return kube::Status::Local("InvalidSpec", "spec.template.metadata.annotations[" + std::string(annotation) + "] " + what);
}

// Go's strconv.ParseBool, which Kueue reads this annotation with.
std::optional<bool> ParseGoBool(std::string_view v) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (v == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (v == f) return false;
  }
  return std::nullopt;
}

std::optional<long long> ParseInt(std::string_view v) {
  long long out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return out;
}

// The annotation's value; nullopt when it is absent.
kube::Result<std::optional<std::string>> Read(const Json& annotations, std::string_view key) {
  if (!annotations.is_object()) return std::optional<std::string>();
  auto it = annotations.find(std::string(key));
  if (it == annotations.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return Invalid(key, "must be a string");
  return std::optional<std::string>(it->get<std::string>());
}

kube::Status CheckLabelKey(std::string_view annotation, const std::string& value) {
  return IsLabelKey(value) ? kube::Status::Ok() : Invalid(annotation, std::string(kLabelKeyRule) + ", got \"" + value + "\"");
}

// Kueue's rules for the multi-layer slice annotation: a JSON array of 1 to 3 layers
// {"topology": <label key>, "size": >= 1}, each topology once, each size dividing the one before
// it, the first at most the job's pods.
kube::Result<Json> ParseSliceConstraints(const std::string& value, int replicas) {
  const std::string_view key = contract::kAnnotationKueueSliceTopologyConstraints;
  Json layers = Json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!layers.is_array()) return Invalid(key, "must be a JSON array of {\"topology\", \"size\"}, got " + value);
  if (layers.empty() || layers.size() > 3) return Invalid(key, "must have 1 to 3 layers, got " + std::to_string(layers.size()));
  std::set<std::string> seen;
  Json out = Json::array();
  for (const Json& layer : layers) {
    const auto topology = layer.is_object() ? layer.find("topology") : layer.end();
    const auto size = layer.is_object() ? layer.find("size") : layer.end();
    if (topology == layer.end() || !topology->is_string() || size == layer.end() || !size->is_number_integer()) {
      return Invalid(key, "layers must be {\"topology\": <node label key>, \"size\": <pods>}, got " + layer.dump());
    }
    const std::string label = topology->get<std::string>();
    if (!IsLabelKey(label)) return Invalid(key, std::string("topology ") + kLabelKeyRule + ", got \"" + label + "\"");
    if (size->get<long long>() < 1) return Invalid(key, "size must be at least 1, got " + size->dump());
    if (!seen.insert(label).second) return Invalid(key, "names topology " + label + " twice");
    if (!out.empty() && out.back()["size"].get<long long>() % size->get<long long>() != 0) {
      return Invalid(key, "each size must divide the size of the layer before it: " + size->dump() + " does not divide " +
                              out.back()["size"].dump());
    }
    out.push_back({{"topology", label}, {"size", size->get<long long>()}});
  }
  if (out.front()["size"].get<long long>() > replicas) {
    return Invalid(key, "first size must not exceed spec.replicas (" + std::to_string(replicas) + "), got " +
                            out.front()["size"].dump());
  }
  return out;
}

}  // namespace

kube::Result<KueueTopologyRequest> ParseKueueTopologyRequest(const Json& annotations, int replicas) {
  KueueTopologyRequest out;
  auto required = Read(annotations, contract::kAnnotationKueueRequiredTopology);
  auto preferred = Read(annotations, contract::kAnnotationKueuePreferredTopology);
  auto unconstrained = Read(annotations, contract::kAnnotationKueueUnconstrainedTopology);
  auto slice_required = Read(annotations, contract::kAnnotationKueueSliceRequiredTopology);
  auto slice_size = Read(annotations, contract::kAnnotationKueueSliceSize);
  auto constraints = Read(annotations, contract::kAnnotationKueueSliceTopologyConstraints);
  auto group = Read(annotations, contract::kAnnotationKueuePodSetGroupName);
  for (const auto* read : {&required, &preferred, &unconstrained, &slice_required, &slice_size, &constraints, &group}) {
    if (!read->ok()) return read->status();
  }
  if (group->has_value()) {
    return Invalid(contract::kAnnotationKueuePodSetGroupName,
                   "groups two pod sets of one Workload; an NcclJob's Workload has one pod set: remove it");
  }
  if (int(required->has_value()) + int(preferred->has_value()) + int(unconstrained->has_value()) > 1) {
    return Invalid(contract::kAnnotationKueueRequiredTopology,
                   "and the annotations " + std::string(contract::kAnnotationKueuePreferredTopology) + " and " +
                       std::string(contract::kAnnotationKueueUnconstrainedTopology) + ": at most one of them may be set");
  }
  if (*required) {
    if (auto s = CheckLabelKey(contract::kAnnotationKueueRequiredTopology, **required); !s.ok()) return s;
    out.required = **required;
  }
  if (*preferred) {
    if (auto s = CheckLabelKey(contract::kAnnotationKueuePreferredTopology, **preferred); !s.ok()) return s;
    out.preferred = **preferred;
  }
  if (*unconstrained) {
    out.unconstrained = ParseGoBool(**unconstrained);
    if (!out.unconstrained) {
      return Invalid(contract::kAnnotationKueueUnconstrainedTopology, "must be \"true\" or \"false\", got \"" + **unconstrained + "\"");
    }
  }
  if (slice_required->has_value() != slice_size->has_value()) {
    return Invalid(*slice_required ? contract::kAnnotationKueueSliceSize : contract::kAnnotationKueueSliceRequiredTopology,
                   "must be set together with " +
                       std::string(*slice_required ? contract::kAnnotationKueueSliceRequiredTopology
                                                   : contract::kAnnotationKueueSliceSize));
  }
  if (*slice_required) {
    if (auto s = CheckLabelKey(contract::kAnnotationKueueSliceRequiredTopology, **slice_required); !s.ok()) return s;
    const auto size = ParseInt(**slice_size);
    if (!size || *size < 1 || *size > replicas) {
      return Invalid(contract::kAnnotationKueueSliceSize,
                     "must be a number of pods from 1 to spec.replicas (" + std::to_string(replicas) + "), got \"" + **slice_size + "\"");
    }
    out.slice_required = **slice_required;
    out.slice_size = static_cast<int>(*size);
  }
  if (*constraints) {
    if (*slice_required) {
      return Invalid(contract::kAnnotationKueueSliceTopologyConstraints,
                     "must not be set with " + std::string(contract::kAnnotationKueueSliceRequiredTopology) + " and " +
                         std::string(contract::kAnnotationKueueSliceSize) + " (it replaces them)");
    }
    auto layers = ParseSliceConstraints(**constraints, replicas);
    if (!layers.ok()) return layers.status();
    out.slice_constraints = std::move(*layers);
  }
  return out;
}

}  // namespace ncclop::api
