#include "desired/sidecar_ports.h"

#include <gtest/gtest.h>

#include <string>

#include "container_env.h"
#include "desired/pod.h"
#include "test_jobs.h"

namespace ncclop::desired {
namespace {

using testing::EnvValue;

api::NcclJob HostNetworkJob(const std::string& uid) {
  Json object = testing::JobJson();
  object["metadata"]["uid"] = uid;
  object["spec"]["template"]["spec"]["hostNetwork"] = true;
  return *api::ParseNcclJob(object);
}

void ExpectSidecarOn(const Json& pod, int api_port, int probe_port) {
  const Json& sidecar = pod["spec"]["initContainers"][0];
  EXPECT_EQ(sidecar["args"], Json::array({"--listen=127.0.0.1:" + std::to_string(api_port),
                                          "--probe-listen=0.0.0.0:" + std::to_string(probe_port)}));
  EXPECT_EQ(sidecar["ports"][0]["containerPort"], api_port);
  EXPECT_EQ(sidecar["ports"][1]["containerPort"], probe_port);
  EXPECT_EQ(sidecar["readinessProbe"]["httpGet"]["port"], probe_port);
  EXPECT_EQ(sidecar["livenessProbe"]["httpGet"]["port"], probe_port);
  const std::string url = "http://127.0.0.1:" + std::to_string(api_port);
  for (const Json& c : pod["spec"]["containers"]) EXPECT_EQ(EnvValue(c, "NCCLJOB_SIDECAR_URL"), url);
}

TEST(SidecarPorts, DefaultsOffTheHostNetwork) {
  ExpectSidecarOn(Pod(testing::Job(), 0, 1, {}), 8471, 8472);
}

TEST(SidecarPorts, HostNetworkJobsGetAPairOfTheirOwnDerivedFromTheUid) {
  auto a = HostNetworkJob("uid-a"), b = HostNetworkJob("uid-b");
  SidecarPorts pa = ChooseSidecarPorts(a), pb = ChooseSidecarPorts(b);
  EXPECT_NE(pa.api, pb.api) << "two jobs on one node must not collide";
  for (const SidecarPorts& p : {pa, pb}) {
    EXPECT_GE(p.api, 20000);
    EXPECT_LE(p.probe, 29999);
    EXPECT_EQ(p.probe, p.api + 1);
    EXPECT_EQ(p.api % 2, 0);
  }
  EXPECT_EQ(ChooseSidecarPorts(HostNetworkJob("uid-a")).api, pa.api) << "stable: every pod and every restart agree";
  ExpectSidecarOn(Pod(a, 3, 2, {}), pa.api, pa.probe);
}

TEST(SidecarPorts, TheSpecFieldWins) {
  Json object = testing::JobJson();
  object["spec"]["network"]["sidecarPort"] = 9100;
  ExpectSidecarOn(Pod(*api::ParseNcclJob(object), 0, 1, {}), 9100, 9101);
  object["spec"]["template"]["spec"]["hostNetwork"] = true;
  ExpectSidecarOn(Pod(*api::ParseNcclJob(object), 0, 1, {}), 9100, 9101);
  object["spec"]["network"]["sidecarPort"] = 65535;
  EXPECT_FALSE(api::ParseNcclJob(object)->spec_error.empty()) << "the probe port would not fit";
}

}  // namespace
}  // namespace ncclop::desired
