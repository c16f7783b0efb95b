// The NcclJob spec's fields that carry a bound, a default or a fixed set of values, one row each,
// as the CRD (deploy/crd/nccl.dev_nccljobs.yaml: what the API server enforces and users read)
// declares them. The operator checks them again because an old CRD or a direct etcd write can
// let anything through: ParseSpec checks with these rows and NcclJobSpec's defaults are theirs.
// operator/tests/spec_fields_test.cc fails when a row and the CRD, ParseSpec's behaviour or
// operator/REFERENCE.md's spec table disagree, so a bound is changed in the CRD and here together.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ncclop::api::spec_fields {

// The CRD's integer formats: an integer the CRD gives no maximum is bounded by its format's.
enum class IntFormat { kInt32, kInt64 };

inline constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

struct IntField {
  std::string_view path;  // below spec, dot-separated; "[]" at the end: each entry of a list
  IntFormat format;
  std::int64_t minimum;
  std::int64_t maximum;
  std::optional<std::int64_t> default_value;  // what an absent field means; none: it stays unset
};

struct BoolField {
  std::string_view path;
  bool default_value;
};

struct EnumField {
  std::string_view path;
  std::span<const std::string_view> values;
  std::optional<std::string_view> default_value;  // none: absent stays unset
};

// A Kubernetes quantity: a string like 8Gi or a whole number (the CRD's int-or-string with the
// pattern api::kQuantityPattern), never negative.
struct QuantityField {
  std::string_view path;
  std::string_view default_value;
};

// Two rules across fields stay in ParseSpec, as in the CRD's x-kubernetes-validations:
// network.bootstrapRoots <= replicas, failurePolicy.backoffSeconds <= maxBackoffSeconds.
// Columns: path, format, minimum, maximum, default ({}: none).
inline constexpr IntField kReplicas{                "replicas",                            IntFormat::kInt32,    1,       4096,    1};
inline constexpr IntField kGpusPerPod{              "gpusPerPod",                          IntFormat::kInt32,    0,         64,    1};
inline constexpr IntField kInitTimeoutSeconds{      "initTimeoutSeconds",                  IntFormat::kInt32,    1,      86400,  300};
inline constexpr IntField kTtlSecondsAfterFinished{ "ttlSecondsAfterFinished",             IntFormat::kInt32,    0,  kInt32Max,   {}};
inline constexpr IntField kActiveDeadlineSeconds{   "activeDeadlineSeconds",               IntFormat::kInt64,    1,  kInt32Max,   {}};
inline constexpr IntField kSidecarPort{             "network.sidecarPort",                 IntFormat::kInt32, 1024,      65534,   {}};
inline constexpr IntField kBootstrapRoots{          "network.bootstrapRoots",              IntFormat::kInt32,    1,       4096,   {}};
inline constexpr IntField kMaxRestarts{             "failurePolicy.maxRestarts",           IntFormat::kInt32,    0,       1000,    3};
inline constexpr IntField kBackoffSeconds{          "failurePolicy.backoffSeconds",        IntFormat::kInt32,    0,       3600,   10};
inline constexpr IntField kMaxBackoffSeconds{       "failurePolicy.maxBackoffSeconds",     IntFormat::kInt32,    0,      86400,  300};
inline constexpr IntField kMaxDisruptions{          "failurePolicy.maxDisruptions",        IntFormat::kInt32,    0,      10000,   {}};
inline constexpr IntField kForbiddenRetrySeconds{   "failurePolicy.forbiddenRetrySeconds", IntFormat::kInt32,    0,      86400,  300};
inline constexpr IntField kStallTimeoutSeconds{    "failurePolicy.stallTimeoutSeconds",   IntFormat::kInt32,    1,      86400,   {}};
inline constexpr IntField kFailFastExitCode{        "failurePolicy.failFastExitCodes[]",   IntFormat::kInt32,    1,        255,   {}};
inline constexpr IntField kComputeDomainNumNodes{   "computeDomain.numNodes",              IntFormat::kInt32,    0,       4096,    0};

inline constexpr BoolField kSuspend{.path = "suspend", .default_value = false};

inline constexpr std::string_view kGangSchedulingValues[] = {"Auto", "Required", "Disabled"};
inline constexpr EnumField kGangScheduling{
    .path = "gangScheduling", .values = kGangSchedulingValues, .default_value = "Auto"};
inline constexpr std::string_view kRestartStrategyValues[] = {"Auto", "InPlace", "Recreate"};
inline constexpr EnumField kRestartStrategy{
    .path = "failurePolicy.restartStrategy", .values = kRestartStrategyValues, .default_value = "Auto"};
// Unset is Never as well: the operator sets Never on every pod it makes.
inline constexpr std::string_view kRestartPolicyValues[] = {"Never"};
inline constexpr EnumField kRestartPolicy{
    .path = "template.spec.restartPolicy", .values = kRestartPolicyValues, .default_value = {}};
// NVIDIA's ComputeDomain channel.allocationMode: one IMEX channel per pod, or all of them.
inline constexpr std::string_view kComputeDomainAllocationModeValues[] = {"Single", "All"};
inline constexpr EnumField kComputeDomainAllocationMode{.path = "computeDomain.allocationMode",
                                                        .values = kComputeDomainAllocationModeValues,
                                                        .default_value = "Single"};

// The memory-backed emptyDir the trainer gets at /dev/shm (0: none). Docker's and most
// runtimes' 64 MiB is too small for NCCL's shared-memory transport and PyTorch's data loader
// workers; operator/REFERENCE.md says why 8Gi.
inline constexpr QuantityField kShmSize{.path = "shmSize", .default_value = "8Gi"};

// Every row, for the test that holds them against the CRD, ParseSpec and the reference.
inline constexpr IntField kIntFields[] = {
    kReplicas,    kGpusPerPod,     kInitTimeoutSeconds, kTtlSecondsAfterFinished, kActiveDeadlineSeconds,
    kSidecarPort, kBootstrapRoots, kMaxRestarts,        kBackoffSeconds,          kMaxBackoffSeconds,
    kMaxDisruptions, kForbiddenRetrySeconds, kStallTimeoutSeconds, kFailFastExitCode, kComputeDomainNumNodes};
inline constexpr BoolField kBoolFields[] = {kSuspend};
inline constexpr EnumField kEnumFields[] = {kGangScheduling, kRestartStrategy, kRestartPolicy, kComputeDomainAllocationMode};
inline constexpr QuantityField kQuantityFields[] = {kShmSize};

// An int32 field's default, for NcclJobSpec's members; a row without one does not compile.
consteval int Int32Default(const IntField& field) { return static_cast<int>(field.default_value.value()); }

// The key the field has in its parent object: the path's last part, without "[]".
std::string_view Key(std::string_view path);
// The path as messages name it (after "spec."): without "[]".
std::string_view Named(std::string_view path);
// Whether `value` is one of the enum's values.
bool Allows(const EnumField& field, std::string_view value);
// "Auto, Required or Disabled": an enum's values for a message.
std::string OneOf(const EnumField& field);

}  // namespace ncclop::api::spec_fields
