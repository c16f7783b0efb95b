#include <gtest/gtest.h>

#include "desired/configmap.h"
#include "desired/pod.h"
#include "desired/rbac.h"
#include "desired/service.h"
#include "desired/sidecar_ports.h"
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

TEST(Rbac, EveryBootstrapRootPodMayPatchItself) {
  auto job = testing::Job(8, 1);
  job.spec.bootstrap_roots = 3;  // blocks of 3, 3, 2 ranks: roots at pods 0, 3, 6
  job.spec.bootstrap_roots_set = true;
  EXPECT_EQ(Role(job)["rules"][1]["resourceNames"], Json::array({"demo-0", "demo-3", "demo-6"}));
}

TEST(Pod, BootstrapRootsAreInjectedOnlyWhenTheSpecNamesThem) {
  auto job = testing::Job(4, 2);
  EXPECT_EQ(EnvValue(Pod(job, 1, 1, {})["spec"]["containers"][0], "NCCLJOB_BOOTSTRAP_ROOTS"), "<absent>");
  job.spec.bootstrap_roots = 2;
  job.spec.bootstrap_roots_set = true;
  Json pod = Pod(job, 1, 1, {});
  EXPECT_EQ(EnvValue(pod["spec"]["containers"][0], "NCCLJOB_BOOTSTRAP_ROOTS"), "2");
  EXPECT_EQ(EnvValue(pod["spec"]["initContainers"][0], "NCCLJOB_BOOTSTRAP_ROOTS"), "2");
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

api::NcclJob JobWithTemplateSpec(const std::string& field, const std::string& value) {
  Json object = testing::JobJson();
  object["spec"]["template"]["spec"][field] = value;
  return *api::ParseNcclJob(object);
}

TEST(Rbac, TheTemplatesServiceAccountIsKeptAndBound) {
  auto job = JobWithTemplateSpec("serviceAccountName", "trainer-irsa");
  EXPECT_FALSE(UsesJobServiceAccount(job));
  EXPECT_EQ(PodServiceAccountName(job), "trainer-irsa");
  EXPECT_EQ(RoleBinding(job)["subjects"], Json::array({{{"kind", "ServiceAccount"}, {"name", "trainer-irsa"},
                                                         {"namespace", "ml"}}}));
  EXPECT_EQ(RoleBinding(job)["roleRef"]["name"], "demo-nccl");
  Json pod = Pod(job, 1, 1, {});
  EXPECT_EQ(pod["spec"]["serviceAccountName"], "trainer-irsa");
  EXPECT_EQ(pod["spec"]["automountServiceAccountToken"], true);
}

TEST(Rbac, TheDeprecatedServiceAccountFieldCountsAndAnEmptyNameDoesNot) {
  auto old_style = JobWithTemplateSpec("serviceAccount", "legacy");
  EXPECT_EQ(PodServiceAccountName(old_style), "legacy");
  Json pod = Pod(old_style, 0, 1, {});
  EXPECT_EQ(pod["spec"]["serviceAccountName"], "legacy");
  EXPECT_FALSE(pod["spec"].contains("serviceAccount"));
  auto empty = JobWithTemplateSpec("serviceAccountName", "");
  EXPECT_TRUE(UsesJobServiceAccount(empty));
  EXPECT_EQ(PodServiceAccountName(empty), "demo-nccl");
  EXPECT_TRUE(UsesJobServiceAccount(testing::Job()));
}

TEST(Pod, InjectsTheSidecarAsANativeSidecar) {
  PodOptions options;
  options.sidecar_image = "reg/side:9";
  Json pod = Pod(testing::Job(), 0, 1, options);
  const Json& sidecar = pod["spec"]["initContainers"][0];
  EXPECT_EQ(sidecar["name"], "nccl-sidecar");
  EXPECT_EQ(sidecar["image"], "reg/side:9");
  EXPECT_EQ(sidecar["restartPolicy"], "Always");
  EXPECT_EQ(sidecar["readinessProbe"]["httpGet"]["path"], "/readyz");
  EXPECT_EQ(sidecar["readinessProbe"]["httpGet"]["port"], 8472);
  EXPECT_EQ(EnvValue(sidecar, "NCCLJOB_INDEX"), "0");
  EXPECT_EQ(sidecar["resources"], Json::parse(R"({"requests": {"cpu": "10m", "memory": "32Mi", "ephemeral-storage": "16Mi"},
                                                  "limits": {"cpu": "500m", "memory": "64Mi", "ephemeral-storage": "128Mi"}})"));
  EXPECT_EQ(sidecar["imagePullPolicy"], "Always");
}

// The sidecar gets only what it reads and cannot learn otherwise (contract::env::kSidecarEnv):
// every watcher of pods decodes each byte of every pod (bench/scale/podcost.py). Its namespace
// is its service account's, its pod name <job>-<index>; no fieldRef is left on it.
TEST(Pod, TheSidecarGetsOnlyWhatItReadsAndCannotLearn) {
  api::NcclJob job = testing::Job();
  job.spec.bootstrap_roots_set = true;
  job.spec.bootstrap_roots = 2;
  Json pod = Pod(job, 1, 2, {});
  const Json& sidecar = pod["spec"]["initContainers"][0];
  const Json& trainer = pod["spec"]["containers"][0];
  std::vector<std::string> names;
  for (const Json& v : sidecar["env"]) {
    names.push_back(v["name"]);
    EXPECT_TRUE(v.contains("value") && !v.contains("valueFrom")) << v.dump();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"NCCLJOB_NAME", "NCCLJOB_UID", "NCCLJOB_INDEX", "NCCLJOB_REPLICAS",
                                             "NCCLJOB_GPUS_PER_POD", "NCCLJOB_ATTEMPT", "NCCLJOB_BOOTSTRAP_ROOTS"}));
  for (const std::string& name : names) EXPECT_EQ(EnvValue(sidecar, name), EnvValue(trainer, name)) << name;
  // The trainer keeps the whole contract.
  for (const char* name : {"NCCLJOB_NAMESPACE", "NCCLJOB_WORLD_SIZE", "NCCLJOB_POD_NAME", "NCCLJOB_POD_IP",
                           "NCCLJOB_SIDECAR_URL", "NCCLJOB_INIT_TIMEOUT_SECONDS", "MASTER_ADDR", "RANK",
                           "PADDLE_CURRENT_ENDPOINT"}) {
    EXPECT_EQ(EnvValue(sidecar, name), "<absent>") << name;
    EXPECT_NE(EnvValue(trainer, name), "<absent>") << name;
  }
  // What that saves per pod as made (the API server adds as much again in managedFields).
  EXPECT_LT(sidecar["env"].dump().size(), 360u) << sidecar["env"].dump();
}

TEST(Pod, TheSidecarMeetsPodSecurityRestricted) {
  const Json sc = Pod(testing::Job(), 0, 1, {})["spec"]["initContainers"][0]["securityContext"];
  EXPECT_EQ(sc["runAsNonRoot"], true);
  EXPECT_GT(sc["runAsUser"].get<int>(), 0);
  EXPECT_EQ(sc["allowPrivilegeEscalation"], false);
  EXPECT_EQ(sc["capabilities"]["drop"], Json::array({"ALL"}));
  EXPECT_FALSE(sc["capabilities"].contains("add"));
  EXPECT_EQ(sc["seccompProfile"]["type"], "RuntimeDefault");
  EXPECT_EQ(sc["readOnlyRootFilesystem"], true);
}

TEST(Pod, SidecarResourcesAndPullPolicyComeFromTheOptions) {
  PodOptions options;
  options.sidecar_image_pull_policy = "IfNotPresent";
  options.sidecar_resources = {.cpu_request = "20m", .memory_request = "", .ephemeral_storage_request = "",
                               .cpu_limit = "", .memory_limit = "128Mi", .ephemeral_storage_limit = ""};
  const Json sidecar = Pod(testing::Job(), 0, 1, options)["spec"]["initContainers"][0];
  EXPECT_EQ(sidecar["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(sidecar["resources"], Json::parse(R"({"requests": {"cpu": "20m"}, "limits": {"memory": "128Mi"}})"));
  options.sidecar_resources = {"", "", "", "", "", ""};
  options.sidecar_image_pull_policy = "";
  const Json bare = Pod(testing::Job(), 0, 1, options)["spec"]["initContainers"][0];
  EXPECT_EQ(bare["resources"], Json::object());
  EXPECT_FALSE(bare.contains("imagePullPolicy")) << "empty: the API server's default for the tag";
}

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
