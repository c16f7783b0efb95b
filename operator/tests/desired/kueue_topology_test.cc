#include "desired/kueue_topology.h"

#include <gtest/gtest.h>

#include "desired/kueue_workload.h"
#include "desired/pod.h"
#include "test_workloads.h"

namespace ncclop::desired {
namespace {

using testing::QueuedJob;

TEST(KueueTopologyRequest, AlwaysNamesThePodIndexLabel) {
  EXPECT_EQ(KueueTopologyRequest({}), Json::parse(R"({"podIndexLabel":"nccl.dev/index"})"))
      << "as Kueue's batch Job integration: the ungater orders the pods by it wherever Kueue assigns a topology";
  api::KueueTopologyRequest request;
  request.required = "example.com/block";
  request.slice_required = "example.com/rack";
  request.slice_size = 4;
  EXPECT_EQ(KueueTopologyRequest(request), Json::parse(R"({"podIndexLabel":"nccl.dev/index","required":"example.com/block",
      "podSetSliceRequiredTopology":"example.com/rack","podSetSliceSize":4})"));
  request = {};
  request.preferred = "example.com/rack";
  EXPECT_EQ(KueueTopologyRequest(request), Json::parse(R"({"podIndexLabel":"nccl.dev/index","preferred":"example.com/rack"})"));
  request = {};
  request.unconstrained = false;
  request.slice_constraints = Json::parse(R"([{"topology":"rack","size":2}])");
  EXPECT_EQ(KueueTopologyRequest(request), Json::parse(R"({"podIndexLabel":"nccl.dev/index","unconstrained":false,
      "podsetSliceRequiredTopologyConstraints":[{"topology":"rack","size":2}]})"));
}

TEST(KueueWorkload, ThePodSetCarriesTheTopologyRequest) {
  api::NcclJob job = QueuedJob();
  job.spec.kueue_topology.required = "example.com/rack";
  const Json wl = KueueWorkload(job, {});
  EXPECT_EQ(wl["spec"]["podSets"][0]["topologyRequest"],
            Json::parse(R"({"podIndexLabel":"nccl.dev/index","required":"example.com/rack"})"));
}

TEST(GateForTopology, WhatKueuesTopologyUngaterNeeds) {
  api::NcclJob job = QueuedJob();
  job.spec.kueue_topology.required = "example.com/rack";
  Json pod = Pod(job, 3, 1, {});
  GateForTopology(pod, job);
  EXPECT_EQ(pod["spec"]["schedulingGates"], Json::parse(R"([{"name":"kueue.x-k8s.io/topology"}])"));
  EXPECT_EQ(pod["metadata"]["annotations"]["kueue.x-k8s.io/workload"], "nccljob-demo");
  EXPECT_EQ(pod["metadata"]["labels"]["kueue.x-k8s.io/podset"], kKueuePodSetName);
  EXPECT_EQ(pod["metadata"]["labels"]["nccl.dev/index"], "3") << "the pod set's podIndexLabel";
  EXPECT_FALSE(pod["metadata"]["annotations"].contains("kueue.x-k8s.io/podset-unconstrained-topology"))
      << "the template's own annotation says how it is placed";
  GateForTopology(pod, job);
  EXPECT_EQ(pod["spec"]["schedulingGates"].size(), 1u) << "the gate once";
}

TEST(GateForTopology, ImpliedByTheFlavorMarksThePodUnconstrained) {
  api::NcclJob job = QueuedJob();
  Json pod = Pod(job, 0, 1, {});
  pod["spec"]["schedulingGates"] = Json::parse(R"([{"name":"example.com/other"}])");
  GateForTopology(pod, job);
  EXPECT_EQ(pod["metadata"]["annotations"]["kueue.x-k8s.io/podset-unconstrained-topology"], "true")
      << "else Kueue counts the pod outside TAS too";
  EXPECT_EQ(pod["spec"]["schedulingGates"],
            Json::parse(R"([{"name":"example.com/other"},{"name":"kueue.x-k8s.io/topology"}])"));
}

}  // namespace
}  // namespace ncclop::desired
