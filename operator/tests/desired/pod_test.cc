#include "desired/pod.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <vector>

#include "container_env.h"
#include "contract/env.h"
#include "desired/env_configmap.h"
#include "test_jobs.h"

namespace ncclop::desired {
namespace {

using testing::EnvValue;
using testing::SeenEnvValue;

int EnvCount(const Json& container, const std::string& name) {
  int n = 0;
  for (const Json& v : container["env"]) n += v["name"] == name;
  return n;
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
  EXPECT_FALSE(pod["metadata"].contains("annotations")) << "the template has none, and the labels are not repeated";
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(pod["spec"]["hostname"], "demo-2");
  EXPECT_EQ(pod["spec"]["subdomain"], "demo");
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(pod["spec"]["serviceAccountName"], "demo-nccl");
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

TEST(Pod, TheTemplatesAnnotationsAreKeptAndTheLabelsNotRepeatedAsAnnotations) {
  Json object = testing::JobJson();
  object["spec"]["template"]["metadata"]["annotations"] = {{"team.example/owner", "b"}};
  Json pod = Pod(*api::ParseNcclJob(object), 2, 3, {}, /*in_place=*/true);
  EXPECT_EQ(pod["metadata"]["annotations"], Json::parse(R"({"team.example/owner": "b",
                                                             "nccl.dev/restarts-before-attempt": "0"})"));
}

// The sidecar gets only what it reads and cannot learn otherwise (contract::env::kSidecarEnv):
// every watcher of pods decodes each byte of every pod (bench/scale/podcost.py). Its namespace
// is its service account's, its pod name <job>-<index>; no fieldRef is left on it.
TEST(Pod, ARestartInPlaceGivesTheTrainerAndSidecarRulesAndTheSidecarItsState) {
  auto job = testing::Job();
  job.spec.failure_policy.fail_fast_exit_codes = {42, 43};
  Json plain = Pod(job, 1, 2, {});
  EXPECT_FALSE(plain["spec"]["initContainers"][0].contains("restartPolicyRules"));
  EXPECT_FALSE(plain["metadata"].value("annotations", Json::object()).contains("nccl.dev/restarts-before-attempt"));

  Json pod = Pod(job, 1, 2, {}, /*in_place=*/true);
  EXPECT_EQ(pod["metadata"]["annotations"]["nccl.dev/restarts-before-attempt"], "0");
  const Json& trainer = pod["spec"]["containers"][0];
  EXPECT_EQ(trainer["restartPolicy"], "Never");
  EXPECT_EQ(trainer["restartPolicyRules"], Json::parse(R"([{"action":"RestartAllContainers",
      "exitCodes":{"operator":"NotIn","values":[0,42,43]}}])"))
      << "a fail-fast code or success ends the pod as before";
  const Json& sidecar = pod["spec"]["initContainers"][0];
  EXPECT_EQ(sidecar["restartPolicy"], "Always");
  EXPECT_EQ(sidecar["restartPolicyRules"], Json::parse(R"([{"action":"RestartAllContainers",
      "exitCodes":{"operator":"NotIn","values":[0]}}])"));
  EXPECT_EQ(sidecar["args"].back(), "--in-place-state=/var/run/nccl-sidecar");
  EXPECT_EQ(sidecar["volumeMounts"][0]["name"], "nccl-sidecar-state");
  EXPECT_EQ(sidecar["volumeMounts"][0]["mountPath"], "/var/run/nccl-sidecar");
  bool has_volume = false;
  for (const Json& v : pod["spec"]["volumes"]) has_volume = has_volume || (v["name"] == "nccl-sidecar-state" && v.contains("emptyDir"));
  EXPECT_TRUE(has_volume);
}

TEST(Pod, AStallTimeoutReachesEverySidecarAsItsFlag) {
  auto job = testing::Job();
  Json plain = Pod(job, 1, 2, {});
  for (const Json& arg : plain["spec"]["initContainers"][0]["args"]) {
    EXPECT_FALSE(arg.get<std::string>().starts_with("--stall-timeout-seconds")) << "no stall watch unless asked";
  }
  job.spec.failure_policy.stall_timeout_seconds = 90;
  for (bool in_place : {false, true}) {
    Json pod = Pod(job, 3, 2, {}, in_place);
    const Json& args = pod["spec"]["initContainers"][0]["args"];
    EXPECT_NE(std::find(args.begin(), args.end(), "--stall-timeout-seconds=90"), args.end()) << in_place;
  }
}

TEST(Pod, TheSidecarGetsOnlyWhatItReadsAndCannotLearn) {
  api::NcclJob job = testing::Job();
  job.spec.bootstrap_roots_set = true;
  job.spec.bootstrap_roots = 2;
  Json pod = Pod(job, 1, 2, {});
  const Json configmap = EnvConfigMap(job);
  const Json& sidecar = pod["spec"]["initContainers"][0];
  const Json& trainer = pod["spec"]["containers"][0];
  // Of the pod's own variables, those it reads, as plain values; the job's come by envFrom.
  std::vector<std::string> names;
  for (const Json& v : sidecar["env"]) {
    names.push_back(v["name"]);
    EXPECT_TRUE(v.contains("value") && !v.contains("valueFrom")) << v.dump();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"NCCLJOB_INDEX", "NCCLJOB_ATTEMPT", "NCCLJOB_BOOTSTRAP_ROOTS"}));
  for (const char* name : contract::env::kSidecarEnv) {
    EXPECT_NE(SeenEnvValue(sidecar, configmap, name), "<absent>") << name;
    EXPECT_EQ(SeenEnvValue(sidecar, configmap, name), SeenEnvValue(trainer, configmap, name)) << name;
  }
  // The trainer keeps the whole contract; the pod's own variables for it are not the sidecar's.
  for (const char* name : {"NCCLJOB_POD_NAME", "NCCLJOB_POD_IP", "NCCLJOB_SIDECAR_URL", "NCCLJOB_INIT_TIMEOUT_SECONDS",
                           "RANK", "NODE_RANK", "PADDLE_TRAINER_ID", "PADDLE_CURRENT_ENDPOINT"}) {
    EXPECT_EQ(SeenEnvValue(sidecar, configmap, name), "<absent>") << name;
    EXPECT_NE(SeenEnvValue(trainer, configmap, name), "<absent>") << name;
  }
  // What that saves per pod as made (the API server adds as much again in managedFields).
  EXPECT_LT(sidecar["env"].dump().size(), 160u) << sidecar["env"].dump();
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

// The job's variables come by envFrom, after the container's own sources (the last source wins a
// key), so a user's ConfigMap of the same keys cannot override them; a user's env entry of a
// contract name, which would win over any envFrom, is dropped.
TEST(Pod, TheJobsVariablesComeByEnvFromLastAndWinOverTheUsers) {
  api::NcclJob job = testing::Job(4, 2);
  for (Json& c : job.spec.pod_template["spec"]["containers"]) {
    c["envFrom"] = Json::array({{{"configMapRef", {{"name", "users"}}}}});
    c["env"].push_back({{"name", "MASTER_ADDR"}, {"value", "elsewhere"}});
    c["env"].push_back({{"name", "USES"}, {"value", "$(MASTER_ADDR):$(RANK)"}});
  }
  Json pod = Pod(job, 1, 1, {});
  const Json ours = EnvFromJob(job, JobEnv(job));
  EXPECT_EQ(ours["configMapRef"]["name"], EnvConfigMapName(job));
  for (const Json& c : pod["spec"]["containers"]) {
    ASSERT_EQ(c["envFrom"].size(), 2u) << c.dump();
    EXPECT_EQ(c["envFrom"][0]["configMapRef"]["name"], "users");
    EXPECT_EQ(c["envFrom"][1], ours);
    EXPECT_EQ(EnvValue(c, "MASTER_ADDR"), "<absent>") << "the user's entry would win over the job's";
    EXPECT_EQ(EnvValue(c, "USES"), "$(MASTER_ADDR):$(RANK)");
  }
  EXPECT_EQ(pod["spec"]["initContainers"][0]["envFrom"], Json::array({ours}));
}

// The name ends in a hash of the data, the UID among it: stable for the job (every operator and
// release that makes the same data finds it), another for another job of the same name or for
// other data, so a kubelet's copy of one is never taken for another.
TEST(EnvConfigMap, TheNameFollowsTheDataAndTheUid) {
  const api::NcclJob job = testing::Job(4, 2);
  EXPECT_EQ(EnvConfigMapName(job), "demo-nccl-env-fa03014c7e") << "a pinned value: FNV-1a 64 of the data";
  EXPECT_EQ(EnvConfigMapName(job), EnvConfigMap(job)["metadata"]["name"]);
  api::NcclJob again = job;
  again.uid = "uid-2";
  EXPECT_NE(EnvConfigMapName(again), EnvConfigMapName(job));
  api::NcclJob bigger = job;
  bigger.spec.replicas = 8;
  EXPECT_NE(EnvConfigMapName(bigger), EnvConfigMapName(job));
  api::NcclJob later = job;
  later.spec.init_timeout_seconds = 30;  // a pod's own value, not in the ConfigMap
  EXPECT_EQ(EnvConfigMapName(later), EnvConfigMapName(job));
}

// Each variable is carried once: the job's in its ConfigMap, the pod's in its env, never both.
TEST(Pod, TheJobsVariablesAreNotRepeatedInThePod) {
  api::NcclJob job = testing::Job(4, 2);
  job.spec.socket_ifname = "eth0";
  const Json configmap = EnvConfigMap(job);
  EXPECT_EQ(configmap["immutable"], true);
  EXPECT_EQ(configmap["metadata"]["name"], EnvConfigMapName(job));
  EXPECT_EQ(configmap["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  Json pod = Pod(job, 2, 1, {});
  for (const Json& c : pod["spec"]["containers"]) {
    for (const Json& v : c["env"]) EXPECT_FALSE(configmap["data"].contains(v["name"].get<std::string>())) << v.dump();
  }
  // Two pods of the job, or of two attempts, agree on all of it.
  EXPECT_EQ(EnvConfigMap(job), EnvConfigMap(job));
  for (const auto& [name, value] : configmap["data"].items()) {
    EXPECT_EQ(SeenEnvValue(Pod(job, 0, 1, {})["spec"]["containers"][0], configmap, name), value) << name;
  }
}

TEST(Pod, EnvContractInEveryContainerAndItWinsOverTheUsers) {
  const api::NcclJob job = testing::Job(4, 2);
  const Json configmap = EnvConfigMap(job);
  Json pod = Pod(job, 3, 2, {});
  for (const Json& c : pod["spec"]["containers"]) {
    auto EnvValue = [&](const Json& container, const std::string& name) { return SeenEnvValue(container, configmap, name); };
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
  const api::NcclJob at_limit_job = testing::Job(256, 1);
  const Json at_limit_cm = EnvConfigMap(at_limit_job);
  Json at_limit = Pod(at_limit_job, 255, 1, {});
  const Json& c = at_limit["spec"]["containers"][0];
  EXPECT_EQ(SeenEnvValue(c, at_limit_cm, "PADDLE_TRAINER_ENDPOINTS").rfind("demo-0.demo.ml.svc:6170,demo-1.", 0), 0u);
  EXPECT_EQ(SeenEnvValue(c, at_limit_cm, "PADDLE_CURRENT_ENDPOINT"), "demo-255.demo.ml.svc:6170");
  const api::NcclJob over_job = testing::Job(257, 1);
  const Json over_cm = EnvConfigMap(over_job);
  Json over = Pod(over_job, 256, 1, {});
  EXPECT_EQ(SeenEnvValue(over["spec"]["containers"][0], over_cm, "PADDLE_TRAINER_ENDPOINTS"), "<absent>");
  EXPECT_EQ(SeenEnvValue(over["spec"]["containers"][0], over_cm, "PADDLE_TRAINERS_NUM"), "257");
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
