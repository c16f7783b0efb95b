#include <gtest/gtest.h>

#include "desired/configmap.h"
#include "desired/pod.h"
#include "desired/rbac.h"
#include "desired/service.h"
#include "test_jobs.h"

namespace ncclop::desired {
namespace {

std::string EnvValue(const Json& container, const std::string& name) {
  for (const Json& v : container["env"]) {
    if (v["name"] == name) return v.contains("value") ? v["value"].get<std::string>() : "<from>";
  }
  return "<absent>";
}

int EnvCount(const Json& container, const std::string& name) {
  int n = 0;
  for (const Json& v : container["env"]) n += v["name"] == name;
  return n;
}

TEST(Metadata, OwnerReferenceIsControllerAndBlocksDeletion) {
  Json ref = OwnerReference(testing::Job());
  EXPECT_EQ(ref["apiVersion"], "nccl.dev/v1alpha1");
  EXPECT_EQ(ref["kind"], "NcclJob");
  EXPECT_EQ(ref["uid"], "uid-1");
  EXPECT_EQ(ref["controller"], true);
  EXPECT_EQ(ref["blockOwnerDeletion"], true);
}

TEST(ConfigMap, NamesItsAttemptAndHoldsTheIdOnlyWhenPublished) {
  auto job = testing::Job();
  Json empty = ConfigMap(job, 2, std::nullopt);
  EXPECT_EQ(empty["metadata"]["name"], "demo-nccl");
  EXPECT_EQ(empty["data"]["attempt"], "2");
  EXPECT_EQ(empty["data"]["jobUID"], "uid-1");
  EXPECT_FALSE(empty["data"].contains("uniqueId"));
  Json full = ConfigMap(job, 2, PublishedId{"QUJD", "2024-01-01T00:00:00Z"});
  EXPECT_EQ(full["data"]["uniqueId"], "QUJD");
  EXPECT_EQ(full["data"]["publishedAt"], "2024-01-01T00:00:00Z");
}

TEST(Service, IsHeadlessAndPublishesNotReadyAddresses) {
  Json svc = HeadlessService(testing::Job());
  EXPECT_EQ(svc["metadata"]["name"], "demo");
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(svc["spec"]["selector"]["nccl.dev/job-name"], "demo");
}

TEST(Rbac, RoleGrantsOnlyTheJobsConfigMapAndRootPod) {
  auto job = testing::Job();
  Json role = Role(job);
  ASSERT_EQ(role["rules"].size(), 2u);
  EXPECT_EQ(role["rules"][0]["resourceNames"], Json::array({"demo-nccl"}));
  EXPECT_EQ(role["rules"][0]["verbs"], Json::array({"get", "list", "watch"}));
  EXPECT_EQ(role["rules"][1]["resourceNames"], Json::array({"demo-0"}));
  EXPECT_EQ(role["rules"][1]["verbs"], Json::array({"get", "patch"}));
  Json binding = RoleBinding(job);
  EXPECT_EQ(binding["roleRef"]["name"], "demo-nccl");
  EXPECT_EQ(binding["subjects"][0]["name"], ServiceAccount(job)["metadata"]["name"]);
  EXPECT_EQ(binding["subjects"][0]["namespace"], "ml");
}

TEST(Pod, CarriesIdentityLabelsHostnameAndServiceAccount) {
  Json pod = Pod(testing::Job(), 2, 3, {});
  EXPECT_EQ(pod["metadata"]["name"], "demo-2");
  EXPECT_EQ(pod["metadata"]["labels"]["nccl.dev/job-name"], "demo");
  EXPECT_EQ(pod["metadata"]["labels"]["nccl.dev/index"], "2");
  EXPECT_EQ(pod["metadata"]["labels"]["nccl.dev/attempt"], "3");
  EXPECT_EQ(pod["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(pod["metadata"]["annotations"]["nccl.dev/attempt"], "3");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(pod["spec"]["hostname"], "demo-2");
  EXPECT_EQ(pod["spec"]["subdomain"], "demo");
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(pod["spec"]["serviceAccountName"], "demo-nccl");
}

TEST(Pod, InjectsTheSidecarAsANativeSidecar) {
  Json pod = Pod(testing::Job(), 0, 1, {.sidecar_image = "reg/side:9"});
  const Json& sidecar = pod["spec"]["initContainers"][0];
  EXPECT_EQ(sidecar["name"], "nccl-sidecar");
  EXPECT_EQ(sidecar["image"], "reg/side:9");
  EXPECT_EQ(sidecar["restartPolicy"], "Always");
  EXPECT_EQ(sidecar["readinessProbe"]["httpGet"]["path"], "/readyz");
  EXPECT_EQ(sidecar["readinessProbe"]["httpGet"]["port"], 8472);
  EXPECT_EQ(EnvValue(sidecar, "NCCLJOB_INDEX"), "0");
  EXPECT_FALSE(sidecar["resources"].contains("limits"));
}

TEST(Pod, GpuLimitGoesToTheTrainerOnly) {
  Json pod = Pod(testing::Job(4, 8), 0, 1, {});
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "8");
  EXPECT_FALSE(pod["spec"]["containers"][1].contains("resources"));
  Json cpu = Pod(testing::Job(4, 0), 0, 1, {});
  EXPECT_FALSE(cpu["spec"]["containers"][0].contains("resources"));
}

TEST(Pod, TheUsersVariablesComeAfterTheContractSoTheyCanReferToIt) {
  Json pod = Pod(testing::Job(4, 2), 1, 1, {});
  const Json& env = pod["spec"]["containers"][0]["env"];
  auto position = [&](const std::string& name) {
    for (std::size_t i = 0; i < env.size(); ++i) {
      if (env[i]["name"] == name) return static_cast<int>(i);
    }
    return -1;
  };
  ASSERT_GE(position("KEEP"), 0);
  EXPECT_GT(position("KEEP"), position("RANK"));
  EXPECT_GT(position("KEEP"), position("NCCLJOB_INDEX"));
}

TEST(Pod, EnvContractInEveryContainerAndItWinsOverTheUsers) {
  Json pod = Pod(testing::Job(4, 2), 3, 2, {});
  for (const Json& c : pod["spec"]["containers"]) {
    EXPECT_EQ(EnvValue(c, "NCCLJOB_NAME"), "demo");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_NAMESPACE"), "ml");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_UID"), "uid-1");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_INDEX"), "3");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_REPLICAS"), "4");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_GPUS_PER_POD"), "2");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_WORLD_SIZE"), "8");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_ATTEMPT"), "2");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_SIDECAR_URL"), "http://127.0.0.1:8471");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_POD_IP"), "<from>");
    EXPECT_EQ(EnvValue(c, "NCCLJOB_INIT_TIMEOUT_SECONDS"), "300");
    EXPECT_EQ(EnvValue(c, "MASTER_ADDR"), "demo-0.demo.ml.svc");
    EXPECT_EQ(EnvValue(c, "MASTER_PORT"), "29500");
    EXPECT_EQ(EnvValue(c, "WORLD_SIZE"), "4");
    EXPECT_EQ(EnvValue(c, "RANK"), "3");
    EXPECT_EQ(EnvValue(c, "LOCAL_WORLD_SIZE"), "2");
    EXPECT_EQ(EnvValue(c, "NCCL_SOCKET_IFNAME"), "<absent>");
    EXPECT_EQ(EnvCount(c, "RANK"), 1);
    EXPECT_EQ(EnvValue(c, "PADDLE_TRAINER_ID"), "3");
    EXPECT_EQ(EnvValue(c, "PADDLE_TRAINERS_NUM"), "4");
    EXPECT_EQ(EnvValue(c, "PADDLE_CURRENT_ENDPOINT"), "demo-3.demo.ml.svc:6170");
    EXPECT_EQ(EnvValue(c, "PADDLE_TRAINER_ENDPOINTS"),
              "demo-0.demo.ml.svc:6170,demo-1.demo.ml.svc:6170,demo-2.demo.ml.svc:6170,demo-3.demo.ml.svc:6170");
  }
  EXPECT_EQ(EnvValue(pod["spec"]["containers"][0], "KEEP"), "1");
}

TEST(Pod, PaddleEndpointListOnlyUpTo256Pods) {
  Json at_limit = Pod(testing::Job(256, 1), 255, 1, {});
  const Json& c = at_limit["spec"]["containers"][0];
  EXPECT_EQ(EnvValue(c, "PADDLE_TRAINER_ENDPOINTS").rfind("demo-0.demo.ml.svc:6170,demo-1.", 0), 0u);
  EXPECT_EQ(EnvValue(c, "PADDLE_CURRENT_ENDPOINT"), "demo-255.demo.ml.svc:6170");
  Json over = Pod(testing::Job(257, 1), 256, 1, {});
  EXPECT_EQ(EnvValue(over["spec"]["containers"][0], "PADDLE_TRAINER_ENDPOINTS"), "<absent>");
  EXPECT_EQ(EnvValue(over["spec"]["containers"][0], "PADDLE_TRAINERS_NUM"), "257");
}

TEST(Pod, TheTrainersLastOutputBecomesItsTerminationMessageUnlessTheUserChose) {
  Json pod = Pod(testing::Job(4, 2), 0, 1, {});
  for (const Json& c : pod["spec"]["containers"]) {
    if (c["name"] == "trainer") {
      EXPECT_EQ(c.value("terminationMessagePolicy", ""), "FallbackToLogsOnError");
    } else {
      EXPECT_FALSE(c.contains("terminationMessagePolicy")) << c["name"];
    }
  }
  api::NcclJob chosen = testing::Job(4, 2);
  for (Json& c : chosen.spec.pod_template["spec"]["containers"]) {
    if (c["name"] == "trainer") c["terminationMessagePolicy"] = "File";
  }
  Json kept = Pod(chosen, 0, 1, {});
  for (const Json& c : kept["spec"]["containers"]) {
    if (c["name"] == "trainer") {
      EXPECT_EQ(c.value("terminationMessagePolicy", ""), "File");
    }
  }
}

TEST(Pod, SocketIfnameOnlyWhenTheSpecSetsIt) {
  auto job = testing::Job();
  job.spec.socket_ifname = "^docker";
  Json pod = Pod(job, 0, 1, {});
  EXPECT_EQ(EnvValue(pod["spec"]["containers"][0], "NCCL_SOCKET_IFNAME"), "^docker");
}

}  // namespace
}  // namespace ncclop::desired
