// api/spec_fields.h against every other place its facts are written: the CRD the API server
// enforces (deploy/crd/nccl.dev_nccljobs.yaml, read as the JSON the build makes of it), what
// ParseSpec does, and operator/REFERENCE.md's spec table. The CRD is what users are served;
// a failure names the field and the place that differs from it.
#include "api/spec_fields.h"

#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/nccl_job.h"
#include "api/quantity.h"

namespace ncclop::api {
namespace {

using Json = nlohmann::json;
using spec_fields::BoolField;
using spec_fields::EnumField;
using spec_fields::IntField;
using spec_fields::IntFormat;
using spec_fields::QuantityField;

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The CRD's schema of .spec (one version: v1alpha1).
Json SpecSchema() {
  const Json crd = Json::parse(ReadFile(NCCLOP_CRD_JSON), nullptr, /*allow_exceptions=*/false);
  if (crd.is_discarded()) return Json();
  return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
}

// ---- (a) the table against the CRD -------------------------------------------------------

std::int64_t FormatMinimum(const std::string& format) {
  return format == "int32" ? std::numeric_limits<std::int32_t>::min() : std::numeric_limits<std::int64_t>::min();
}
std::int64_t FormatMaximum(const std::string& format) {
  return format == "int32" ? std::numeric_limits<std::int32_t>::max() : std::numeric_limits<std::int64_t>::max();
}

std::string FormatName(IntFormat format) { return format == IntFormat::kInt32 ? "int32" : "int64"; }

// What a scalar's schema states in the words both sides share; an integer's missing bound is
// its format's, so `minimum: 0` alone and the table's 0..INT32_MAX agree.
Json Constraints(const Json& schema) {
  // A quantity: int-or-string (no type of its own), a pattern for its strings.
  const bool int_or_string = schema.value("x-kubernetes-int-or-string", false);
  Json out = {{"type", int_or_string ? "int-or-string" : schema.value("type", "")}};
  if (int_or_string) out["pattern"] = schema.value("pattern", "");
  for (const char* key : {"default", "enum"}) {
    if (schema.contains(key)) out[key] = schema[key];
  }
  if (out["type"] == "integer") {
    const std::string format = schema.value("format", "int64");
    out["format"] = format;
    out["minimum"] = schema.value("minimum", FormatMinimum(format));
    out["maximum"] = schema.value("maximum", FormatMaximum(format));
  }
  return out;
}

// Every scalar below .spec that has a bound, a default or an enum, by path ("[]": a list's
// entries), and every object default (they must be {}: the table's defaults fill them in).
void CollectConstrained(const Json& schema, const std::string& path, std::map<std::string, Json>* out,
                        std::vector<std::string>* object_defaults) {
  const std::string type = schema.value("type", "");
  if (type == "object") {
    if (schema.contains("default") && schema["default"] != Json::object()) object_defaults->push_back(path);
    if (!schema.contains("properties")) return;
    for (const auto& [name, property] : schema["properties"].items()) {
      CollectConstrained(property, path.empty() ? name : path + "." + name, out, object_defaults);
    }
  } else if (type == "array") {
    CollectConstrained(schema.value("items", Json::object()), path + "[]", out, object_defaults);
  } else if (schema.contains("minimum") || schema.contains("maximum") || schema.contains("default") ||
             schema.contains("enum") || schema.value("x-kubernetes-int-or-string", false)) {
    (*out)[path] = Constraints(schema);
  }
}

Json Constraints(const IntField& f) {
  Json out = {{"type", "integer"},
              {"format", FormatName(f.format)},
              {"minimum", f.minimum},
              {"maximum", f.maximum}};
  if (f.default_value) out["default"] = *f.default_value;
  return out;
}

Json Constraints(const BoolField& f) { return {{"type", "boolean"}, {"default", f.default_value}}; }

Json Constraints(const EnumField& f) {
  Json out = {{"type", "string"}, {"enum", Json::array()}};
  for (std::string_view value : f.values) out["enum"].push_back(value);
  if (f.default_value) out["default"] = *f.default_value;
  return out;
}

Json Constraints(const QuantityField& f) {
  return {{"type", "int-or-string"}, {"pattern", std::string(kQuantityPattern)}, {"default", std::string(f.default_value)}};
}

std::map<std::string, Json> TableConstraints() {
  std::map<std::string, Json> out;
  for (const IntField& f : spec_fields::kIntFields) out[std::string(f.path)] = Constraints(f);
  for (const BoolField& f : spec_fields::kBoolFields) out[std::string(f.path)] = Constraints(f);
  for (const EnumField& f : spec_fields::kEnumFields) out[std::string(f.path)] = Constraints(f);
  for (const QuantityField& f : spec_fields::kQuantityFields) out[std::string(f.path)] = Constraints(f);
  return out;
}

TEST(SpecFields, StateWhatTheCrdStatesForEveryBoundedDefaultedOrEnumField) {
  const Json schema = SpecSchema();
  ASSERT_TRUE(schema.is_object()) << "cannot read the spec schema from " << NCCLOP_CRD_JSON;
  std::map<std::string, Json> crd;
  std::vector<std::string> object_defaults;
  CollectConstrained(schema, "", &crd, &object_defaults);
  ASSERT_FALSE(crd.empty());
  EXPECT_TRUE(object_defaults.empty()) << "an object default other than {} is not in api/spec_fields.h: "
                                       << ::testing::PrintToString(object_defaults);
  const std::map<std::string, Json> table = TableConstraints();
  for (const auto& [path, stated] : crd) {
    auto row = table.find(path);
    // The pod template is Kubernetes' PodTemplateSpec (deploy/crd/gen): its enums and defaults
    // are the API server's; the table holds only what the operator adds there.
    if (row == table.end() && path.starts_with("template.")) continue;
    if (row == table.end()) {
      ADD_FAILURE() << "spec." << path << " has " << stated.dump() << " in the CRD but no row in api/spec_fields.h";
    } else {
      EXPECT_EQ(row->second, stated) << "spec." << path << ": api/spec_fields.h (left) differs from the CRD (right)";
    }
  }
  for (const auto& [path, row] : table) {
    EXPECT_TRUE(crd.contains(path)) << "api/spec_fields.h has spec." << path << " " << row.dump()
                                    << ", which the CRD does not bound, default or enumerate";
  }
}

// ---- (b) ParseSpec does what each row says ------------------------------------------------

// A spec ParseSpec accepts, whose fields leave every row its whole range: the rules across
// fields (bootstrapRoots <= replicas, backoffSeconds <= maxBackoffSeconds) hold at both ends.
Json BaseSpec() {
  return {{"replicas", spec_fields::kReplicas.maximum},
          {"failurePolicy",
           {{"backoffSeconds", spec_fields::kBackoffSeconds.minimum},
            {"maxBackoffSeconds", spec_fields::kMaxBackoffSeconds.maximum}}},
          {"template", {{"spec", {{"containers", {{{"name", "trainer"}, {"image", "i"}}}}}}}}};
}

// BaseSpec with `path` removed, then set to `value` unless it is null ("[]": a list of one).
Json With(std::string_view path, const Json& value) {
  Json spec = BaseSpec();
  std::string pointer;
  for (char c : spec_fields::Named(path)) pointer += c == '.' ? '/' : c;
  const Json::json_pointer at("/" + pointer);
  if (spec.contains(at)) spec[at.parent_pointer()].erase(at.back());
  if (!value.is_null()) spec[at] = path.ends_with("[]") ? Json::array({value}) : value;
  return spec;
}

// What ParseSpec made of the field at `path`, as JSON; null: unset.
Json Parsed(const NcclJobSpec& spec, std::string_view path) {
  auto optional = [](const auto& v) { return v ? Json(*v) : Json(); };
  const FailurePolicy& fp = spec.failure_policy;
  if (path == "replicas") return spec.replicas;
  if (path == "gpusPerPod") return spec.gpus_per_pod;
  if (path == "initTimeoutSeconds") return spec.init_timeout_seconds;
  if (path == "ttlSecondsAfterFinished") return optional(spec.ttl_seconds_after_finished);
  if (path == "activeDeadlineSeconds") return optional(spec.active_deadline_seconds);
  if (path == "network.sidecarPort") return optional(spec.sidecar_port);
  if (path == "network.bootstrapRoots") return spec.bootstrap_roots_set ? Json(spec.bootstrap_roots) : Json();
  if (path == "failurePolicy.maxRestarts") return fp.max_restarts;
  if (path == "failurePolicy.backoffSeconds") return fp.backoff_seconds;
  if (path == "failurePolicy.maxBackoffSeconds") return fp.max_backoff_seconds;
  if (path == "failurePolicy.maxDisruptions") return optional(fp.max_disruptions);
  if (path == "failurePolicy.forbiddenRetrySeconds") return fp.forbidden_retry_seconds;
  if (path == "failurePolicy.stallTimeoutSeconds") return optional(fp.stall_timeout_seconds);
  if (path == "failurePolicy.failFastExitCodes[]") {
    return fp.fail_fast_exit_codes.empty() ? Json() : Json(fp.fail_fast_exit_codes.front());
  }
  if (path == "suspend") return spec.suspend;
  if (path == "gangScheduling") return static_cast<int>(spec.gang_scheduling);
  if (path == "failurePolicy.restartStrategy") return static_cast<int>(fp.restart_strategy);
  if (path == "template.spec.restartPolicy") return spec.pod_template.at("spec").value("restartPolicy", Json());
  if (path == "computeDomain.numNodes") return spec.compute_domain.num_nodes;
  if (path == "computeDomain.allocationMode") return spec.compute_domain.allocation_mode;
  if (path == "shmSize") return spec.shm_size;
  ADD_FAILURE() << "spec_fields_test has no reader for spec." << path << ": add one to Parsed()";
  return Json();
}

// ParseSpec of BaseSpec with `path` set to `value` (null: absent) accepts it; what it read.
Json Accepted(std::string_view path, const Json& value) {
  auto spec = ParseSpec(With(path, value));
  EXPECT_TRUE(spec.ok()) << "spec." << path << " = " << value.dump() << " refused: " << spec.status().message();
  return spec.ok() ? Parsed(*spec, path) : Json();
}

// ParseSpec refuses `value`, with a message that names the field, the value and `naming`.
void ExpectRefused(std::string_view path, const Json& value, const std::vector<std::string>& naming) {
  auto spec = ParseSpec(With(path, value));
  ASSERT_FALSE(spec.ok()) << "spec." << path << " = " << value.dump() << " accepted";
  const std::string& message = spec.status().message();
  EXPECT_EQ(spec.status().reason(), "InvalidSpec") << message;
  EXPECT_NE(message.find("spec." + std::string(spec_fields::Named(path)) + " "), std::string::npos) << message;
  EXPECT_NE(message.find(value.is_string() ? value.get<std::string>() : value.dump()), std::string::npos) << message;
  for (const std::string& word : naming) EXPECT_NE(message.find(word), std::string::npos) << message;
}

TEST(SpecFields, BaseSpecIsAccepted) { EXPECT_TRUE(ParseSpec(BaseSpec()).ok()); }

TEST(SpecFields, ParseSpecKeepsEveryIntegerWithinItsBoundsAndAppliesItsDefault) {
  for (const IntField& f : spec_fields::kIntFields) {
    SCOPED_TRACE(f.path);
    EXPECT_EQ(Accepted(f.path, f.minimum), f.minimum);
    EXPECT_EQ(Accepted(f.path, f.maximum), f.maximum);
    const std::vector<std::string> bounds = {std::to_string(f.minimum), std::to_string(f.maximum)};
    ExpectRefused(f.path, f.minimum - 1, bounds);
    ExpectRefused(f.path, f.maximum + 1, bounds);
    ExpectRefused(f.path, std::to_string(f.minimum), {});
    EXPECT_EQ(Accepted(f.path, Json()), f.default_value ? Json(*f.default_value) : Json()) << "absent";
  }
}

TEST(SpecFields, ParseSpecReadsEveryBooleanAndAppliesItsDefault) {
  for (const BoolField& f : spec_fields::kBoolFields) {
    SCOPED_TRACE(f.path);
    EXPECT_EQ(Accepted(f.path, true), true);
    EXPECT_EQ(Accepted(f.path, false), false);
    ExpectRefused(f.path, "true", {"true or false"});
    EXPECT_EQ(Accepted(f.path, Json()), f.default_value) << "absent";
  }
}

TEST(SpecFields, ParseSpecTakesExactlyEachEnumsValuesAndAppliesItsDefault) {
  for (const EnumField& f : spec_fields::kEnumFields) {
    SCOPED_TRACE(f.path);
    std::set<Json> read;
    for (std::string_view value : f.values) read.insert(Accepted(f.path, value));
    EXPECT_EQ(read.size(), f.values.size()) << "two values read as one";
    std::vector<std::string> values(f.values.begin(), f.values.end());
    ExpectRefused(f.path, "NotAValue", values);
    ExpectRefused(f.path, std::string(f.values.front()) + "x", values);
    const Json absent = Accepted(f.path, Json());
    EXPECT_EQ(absent, f.default_value ? Accepted(f.path, *f.default_value) : Json()) << "absent";
  }
}

TEST(SpecFields, ParseSpecTakesEveryQuantityAsTheCrdDoesAndAppliesItsDefault) {
  for (const QuantityField& f : spec_fields::kQuantityFields) {
    SCOPED_TRACE(f.path);
    EXPECT_EQ(Accepted(f.path, "16Gi"), "16Gi");
    EXPECT_EQ(Accepted(f.path, "500m"), "500m");
    EXPECT_EQ(Accepted(f.path, 0), "0") << "a whole number, as int-or-string lets it be written";
    EXPECT_EQ(Accepted(f.path, "1e9"), "1e9");
    for (const Json& bad : {Json("8 GB"), Json("-1Gi"), Json(-1), Json(1.5), Json(true), Json("Gi")}) {
      ExpectRefused(f.path, bad, {"Kubernetes quantity"});
    }
    EXPECT_EQ(Accepted(f.path, Json()), std::string(f.default_value)) << "absent";
  }
}

// ---- (c) operator/REFERENCE.md's spec table -----------------------------------------------

// The reference's rows under "## spec": field (without backticks) -> "type, default" cell.
std::map<std::string, std::string> ReferenceSpecRows() {
  std::map<std::string, std::string> rows;
  std::istringstream doc(ReadFile(NCCLOP_REFERENCE_MD));
  bool in_spec = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.starts_with("## ")) in_spec = line == "## spec";
    if (!in_spec || !line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::istringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) {
      const auto first = cell.find_first_not_of(' ');
      const auto last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    if (cells.size() < 3) continue;
    std::string field = cells[0];
    std::erase(field, '`');
    rows[field] = cells[1];
  }
  return rows;
}

// The "type, default" cell a row gets; after it the reference may add "; " and a note.
std::string ReferenceCell(const IntField& f) {
  std::string cell = std::string(f.path.ends_with("[]") ? "list of " : "") + "int " +
                     (f.maximum == FormatMaximum(FormatName(f.format)) ? "≥ " + std::to_string(f.minimum)
                                              : std::to_string(f.minimum) + ".." + std::to_string(f.maximum));
  if (f.default_value) cell += ", default " + std::to_string(*f.default_value);
  return cell;
}

std::string ReferenceCell(const BoolField& f) { return std::string("bool, default ") + (f.default_value ? "true" : "false"); }

std::string ReferenceCell(const QuantityField& f) { return "quantity, default `" + std::string(f.default_value) + "`"; }

std::string ReferenceCell(const EnumField& f) {
  std::string cell;
  for (std::string_view value : f.values) cell += (cell.empty() ? "`" : " / `") + std::string(value) + "`";
  if (f.default_value) cell += ", default `" + std::string(*f.default_value) + "`";
  return cell;
}

void ExpectReferenceSays(const std::map<std::string, std::string>& reference, std::string_view path,
                         const std::string& expected) {
  auto row = reference.find(std::string(spec_fields::Named(path)));
  if (row == reference.end()) {
    ADD_FAILURE() << "operator/REFERENCE.md's spec table has no row `" << spec_fields::Named(path) << "`";
    return;
  }
  const std::string& cell = row->second;
  const bool note = cell.starts_with(expected + "; ") && cell.find("default", expected.size()) == std::string::npos;
  EXPECT_TRUE(cell == expected || note) << "operator/REFERENCE.md, `" << row->first << "`: \"" << cell
                                        << "\", the CRD says \"" << expected << "\" (a note may follow after \"; \")";
}

TEST(SpecFields, ReferenceStatesEveryRowsBoundsAndDefault) {
  const auto reference = ReferenceSpecRows();
  ASSERT_FALSE(reference.empty()) << "no spec table in " << NCCLOP_REFERENCE_MD;
  std::set<std::string> bounded;
  for (const IntField& f : spec_fields::kIntFields) {
    ExpectReferenceSays(reference, f.path, ReferenceCell(f));
    bounded.insert(std::string(spec_fields::Named(f.path)));
  }
  for (const BoolField& f : spec_fields::kBoolFields) {
    ExpectReferenceSays(reference, f.path, ReferenceCell(f));
    bounded.insert(std::string(f.path));
  }
  for (const EnumField& f : spec_fields::kEnumFields) {
    ExpectReferenceSays(reference, f.path, ReferenceCell(f));
    bounded.insert(std::string(f.path));
  }
  for (const QuantityField& f : spec_fields::kQuantityFields) {
    ExpectReferenceSays(reference, f.path, ReferenceCell(f));
    bounded.insert(std::string(f.path));
  }
  // A bound or default the reference states for a field the table does not have is a copy too.
  for (const auto& [field, cell] : reference) {
    const bool states_one = cell.find("..") != std::string::npos || cell.find("≥") != std::string::npos ||
                            cell.find("default") != std::string::npos;
    EXPECT_TRUE(!states_one || bounded.contains(field))
        << "operator/REFERENCE.md states \"" << cell << "\" for `" << field << "`, which api/spec_fields.h has no row for";
  }
}

// Fields of the CRD's spec, objects opened up to (not into) the pod template.
void CollectFields(const Json& schema, const std::string& path, std::set<std::string>* out) {
  if (schema.value("type", "") == "object" && path != "template" && schema.contains("properties")) {
    for (const auto& [name, property] : schema["properties"].items()) {
      CollectFields(property, path.empty() ? name : path + "." + name, out);
    }
  } else {
    out->insert(path);
  }
}

bool InSchema(const Json& spec_schema, const std::string& field) {
  const Json* at = &spec_schema;
  std::istringstream parts(field.substr(0, field.find('[')));
  for (std::string part; std::getline(parts, part, '.');) {
    if (!at->contains("properties") || !(*at)["properties"].contains(part)) return false;
    at = &(*at)["properties"][part];
  }
  return true;
}

TEST(SpecFields, ReferenceHasARowForEveryCrdFieldAndNoOther) {
  const Json schema = SpecSchema();
  ASSERT_TRUE(schema.is_object());
  const auto reference = ReferenceSpecRows();
  std::set<std::string> fields;
  CollectFields(schema, "", &fields);
  for (const std::string& field : fields) {
    EXPECT_TRUE(reference.contains(field)) << "spec." << field << " (CRD) has no row in operator/REFERENCE.md";
  }
  for (const auto& [field, cell] : reference) {
    EXPECT_TRUE(InSchema(schema, field)) << "operator/REFERENCE.md has a row for `" << field << "`, not in the CRD";
  }
}

}  // namespace
}  // namespace ncclop::api
