// docs/contracts.md is the contract's prose: every name declared in contract/ must be in it,
// so a renamed key cannot leave the document behind.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "contract/env.h"
#include "contract/names.h"

namespace contract {
namespace {

std::string ContractsMd() {
  std::ifstream in(NCCLOP_CONTRACTS_MD);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// True when `name` stands inside a code span (between backticks on one line) somewhere.
bool InCodeSpan(const std::string& doc, std::string_view name) {
  for (size_t at = doc.find(name); at != std::string::npos; at = doc.find(name, at + 1)) {
    const size_t line_start = doc.rfind('\n', at) == std::string::npos ? 0 : doc.rfind('\n', at) + 1;
    int ticks = 0;
    for (size_t i = line_start; i < at; ++i) ticks += doc[i] == '`';
    if (ticks % 2 == 1) return true;
  }
  return false;
}

void ExpectQuoted(const std::string& doc, std::string_view name) {
  EXPECT_TRUE(InCodeSpan(doc, name)) << name << " is not in docs/contracts.md";
}

TEST(ContractsMd, NamesEveryLabelAnnotationAndKey) {
  const std::string doc = ContractsMd();
  ASSERT_FALSE(doc.empty()) << "cannot read " << NCCLOP_CONTRACTS_MD;
  for (std::string_view name : {kLabelJobName, kLabelIndex, kLabelAttempt, kAnnotationUniqueId,
                                kAnnotationUniqueIdAttempt, kAnnotationTrainerContainer, kDataAttempt, kDataUniqueId,
                                kDataJobUid, kDataPublishedAt, kSidecarContainerName, kPathId, kPathInfo,
                                kPathHealthz, kPathReadyz, kLabelKueueQueueName, kLabelKueuePriorityClass, kPathRootId, kAnnotationSuspended,
                                kGangPodGroup, kAnnotationKueueRequiredTopology, kAnnotationKueuePreferredTopology,
                                kAnnotationKueueUnconstrainedTopology, kAnnotationKueueSliceRequiredTopology,
                                kAnnotationKueueSliceSize, kAnnotationKueueSliceTopologyConstraints,
                                kAnnotationKueuePodSetGroupName, kKueueTopologySchedulingGate, kAnnotationKueueWorkload,
                                kLabelKueuePodSet}) {
    ExpectQuoted(doc, name);
  }
  ExpectQuoted(doc, SidecarUrl());
  ExpectQuoted(doc, std::to_string(kMasterPort));
  ExpectQuoted(doc, std::to_string(kPaddlePort));
  ExpectQuoted(doc, ConfigMapName("<job>"));
  ExpectQuoted(doc, EnvConfigMapName("<job>", "<hash>"));
  ExpectQuoted(doc, KueueWorkloadName("<job>"));
  // A pod's spec.workloadRef under native gang scheduling (attempt <n>).
  std::string replica_key = GangReplicaKey(0);
  replica_key.replace(replica_key.size() - 1, 1, "<n>");
  ExpectQuoted(doc, "{name: " + GangWorkloadName("<job>") + ", podGroup: " + std::string(kGangPodGroup) +
                        ", podGroupReplicaKey: " + replica_key + "}");
  // 1.36+: the attempt's PodGroup and a pod's spec.schedulingGroup.
  std::string group = GangPodGroupName("<job>", 0);
  group.replace(group.size() - 1, 1, "<n>");
  ExpectQuoted(doc, group);
  ExpectQuoted(doc, "{podGroupName: " + group + "}");
  for (std::string_view field : {kFieldId, kFieldIds, kFieldAttempt, kFieldJob, kFieldJobUid}) {
    ExpectQuoted(doc, "\"" + std::string(field) + "\"");
  }
}

TEST(ContractsMd, NamesThePodShapesVolumeAndTheComputeDomainsNames) {
  const std::string doc = ContractsMd();
  ASSERT_FALSE(doc.empty());
  ExpectQuoted(doc, kShmVolume);
  ExpectQuoted(doc, kShmPath);
  ExpectQuoted(doc, "{name: " + std::string(kComputeDomainClaim) + ", resourceClaimTemplateName: " +
                        ComputeDomainChannelName("<job>") + "}");
  ExpectQuoted(doc, "resources.claims: [{name: " + std::string(kComputeDomainClaim) + "}]");
  ExpectQuoted(doc, "channel.resourceClaimTemplate.name: " + ComputeDomainChannelName("<job>"));
}

TEST(ContractsMd, NamesTheSidecarsInPlaceState) {
  const std::string doc = ContractsMd();
  ASSERT_FALSE(doc.empty());
  ExpectQuoted(doc, std::string(kSidecarStateFlag) + "=" + std::string(kSidecarStateDir));
  ExpectQuoted(doc, std::string(kSidecarStateDir) + "/attempt");
  ExpectQuoted(doc, kSidecarStateVolume);
  ExpectQuoted(doc, std::to_string(kSidecarExitAttemptOver));
}

TEST(ContractsMd, NamesEveryEnvVariable) {
  const std::string doc = ContractsMd();
  ASSERT_FALSE(doc.empty());
  for (const char* name : {env::kJobName, env::kNamespace, env::kJobUid, env::kIndex, env::kReplicas,
                           env::kGpusPerPod, env::kWorldSize, env::kAttempt, env::kSidecarUrl, env::kPodIp,
                           env::kPodName, env::kInitTimeoutSeconds, env::kBootstrapRoots, env::kNcclSocketIfname, env::kMasterAddr,
                           env::kMasterPort, env::kTorchWorldSize, env::kTorchRank, env::kNodeRank, env::kNnodes,
                           env::kLocalWorldSize, env::kPaddleTrainerId, env::kPaddleTrainersNum, env::kPaddleCurrentEndpoint,
                           env::kPaddleTrainerEndpoints, env::kCommMode, env::kLogLevel, env::kTorchLocalRank}) {
    ExpectQuoted(doc, name);
  }
}

TEST(ContractsMd, NamesProgressReportsAndStalls) {
  const std::string doc = ContractsMd();
  ASSERT_FALSE(doc.empty());
  for (std::string_view field : {kFieldRank, kFieldStep, kFieldTotal, kFieldMetrics, kFieldDone, kFieldTime}) {
    ExpectQuoted(doc, "\"" + std::string(field) + "\"");
  }
  ExpectQuoted(doc, kPathProgress);
  ExpectQuoted(doc, kAnnotationProgress);
  ExpectQuoted(doc, std::string(kSidecarStallTimeoutFlag) + "=N");
  ExpectQuoted(doc, std::to_string(kSidecarExitStalled));
  ExpectQuoted(doc, std::to_string(kProgressReportMaxBytes));
  ExpectQuoted(doc, std::to_string(kProgressAnnotationSeconds) + " s");
  EXPECT_NE(doc.find("at most " + std::to_string(kProgressMaxMetrics)), std::string::npos);
  EXPECT_NE(doc.find("names of 1 to " + std::to_string(kProgressMetricNameMax) + " bytes"), std::string::npos);
}

}  // namespace
}  // namespace contract
