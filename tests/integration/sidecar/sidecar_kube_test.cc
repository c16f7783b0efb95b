// The real nccl-sidecar binary against the real kube-apiserver (sidecar_kube_fixture.h): one
// attempt's id served and no other, the root's report onto its pod across kills and restarts, an
// API server restart. In-place restarts: sidecar_in_place_test.cc.
#include <chrono>
#include <cstdio>
#include <future>
#include <string>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "contract/unique_id.h"
#include "sidecar_kube_fixture.h"

namespace sidecar_it {
namespace {

TEST_F(SidecarKubeTest, ServesOnlyItsOwnAttemptsId) {
  const std::string id1 = SomeId(1);
  const std::string id2 = SomeId(2);
  PublishConfigMap(1, id1);
  auto worker1 = StartSidecar(1, 1);
  ASSERT_TRUE(BecomesReady(*worker1)) << worker1->Log();

  auto got = GetId(*worker1, 30);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body;
  EXPECT_EQ(json::parse(got->body), (json{{"id", contract::Base64Encode(id1)}, {"ids", {contract::Base64Encode(id1)}},
                                          {"attempt", 1}, {"job", kJob}, {"jobUID", kJobUid}}));

  // The operator starts attempt 2 with a fresh id: the attempt-1 sidecar turns stale (410) and
  // never hands out the new id, whatever it answers on the way.
  PublishConfigMap(2, id2);
  bool stale = testsupport::WaitFor([&] {
    auto r = GetId(*worker1, 1);
    if (!r) return false;
    if (r->status == 200) {
      EXPECT_EQ(json::parse(r->body)["id"], contract::Base64Encode(id1));
    }
    EXPECT_EQ(r->body.find(contract::Base64Encode(id2)), std::string::npos);
    return r->status == 410;
  }, seconds(30));
  EXPECT_TRUE(stale) << worker1->Log();

  auto worker2 = StartSidecar(1, 2);
  got = GetId(*worker2, 30);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body << worker2->Log();
  EXPECT_EQ(json::parse(got->body)["id"], contract::Base64Encode(id2));
  EXPECT_EQ(json::parse(got->body)["attempt"], 2);

  for (auto* p : {worker1.get(), worker2.get()}) {
    EXPECT_EQ(p->Log().find(contract::Base64Encode(id1).substr(0, 24)), std::string::npos);
    EXPECT_EQ(p->Log().find(contract::Base64Encode(id2).substr(0, 24)), std::string::npos);
    EXPECT_EQ(p->Terminate(), 0) << p->Log();
  }
}

TEST_F(SidecarKubeTest, LongPollIsAnsweredWhenTheIdIsPublished) {
  PublishConfigMap(1, std::nullopt);
  auto worker = StartSidecar(1, 1);
  ASSERT_TRUE(BecomesReady(*worker)) << worker->Log();
  auto early = GetId(*worker, 0);
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 204);

  auto pending = std::async(std::launch::async, [&] { return GetId(*worker, 60); });
  const std::string id = SomeId(3);
  PublishConfigMap(1, id);
  auto got = pending.get();
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body << worker->Log();
  EXPECT_EQ(json::parse(got->body)["id"], contract::Base64Encode(id));
  EXPECT_EQ(worker->Terminate(), 0) << worker->Log();
}

// Pods made by an operator before the lean sidecar env carry NCCLJOB_NAMESPACE (and the
// pod's name, the world size): a sidecar reads them as before. The root is one such pod, the
// worker one of today's (no namespace in its env; the test's other cases all run so).
TEST_F(SidecarKubeTest, AnOlderPodsFullEnvStillWorks) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);
  auto root = StartSidecar(0, 1, "", 0, /*old_env=*/true);
  auto worker = StartSidecar(1, 1);
  ASSERT_TRUE(BecomesReady(*root)) << root->Log();
  ASSERT_TRUE(BecomesReady(*worker)) << worker->Log();
  httplib::Client client("127.0.0.1", root->api_port());
  const std::string id = SomeId(6);
  auto posted = client.Post("/v1/id", id, "application/octet-stream");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 200) << posted->body << root->Log();
  EXPECT_EQ(RootPodAnnotations()["nccl.dev/unique-id"], contract::Base64Encode(id));
  PublishConfigMap(1, id);
  auto got = GetId(*worker, 30);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body << worker->Log();
  EXPECT_EQ(json::parse(got->body)["id"], contract::Base64Encode(id));
  httplib::Client info("127.0.0.1", worker->api_port());
  auto described = info.Get("/v1/info");
  ASSERT_TRUE(described);
  EXPECT_EQ(json::parse(described->body)["namespace"], ns_);  // from the token kubeconfig's context
  EXPECT_EQ(root->Terminate(), 0) << root->Log();
  EXPECT_EQ(worker->Terminate(), 0) << worker->Log();
}

TEST_F(SidecarKubeTest, RootPostAnnotatesItsOwnPod) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);

  auto root = StartSidecar(0, 1);
  httplib::Client client("127.0.0.1", root->api_port());
  const std::string id = SomeId(4);
  auto posted = client.Post("/v1/id", id, "application/octet-stream");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 200) << posted->body;

  // Answered once stored: the annotations are on the pod when the 200 comes.
  json annotations = RootPodAnnotations();
  EXPECT_EQ(annotations["nccl.dev/unique-id"], contract::Base64Encode(id));
  EXPECT_EQ(annotations["nccl.dev/unique-id-attempt"], "1");

  auto second = client.Post("/v1/id", SomeId(5), "application/octet-stream");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 409);

  EXPECT_EQ(root->Log().find(contract::Base64Encode(id).substr(0, 24)), std::string::npos);
  EXPECT_EQ(root->Terminate(), 0) << root->Log();
}

// Found by tests/chaos: a root trainer of a CPU job ended right after its POST; the kubelet then
// stopped the sidecar. If the API server could not take the annotation yet (restarting; here:
// RBAC refuses the patch until the test allows it), the sidecar used to exit at once and the
// attempt's id was lost: the workers waited out their init timeout. Our trainers now wait for
// the POST's answer (given once the id is on the pod); for one that gives up waiting, the
// sidecar keeps reporting after SIGTERM, within the pod's grace period.
TEST_F(SidecarKubeTest, StoppedRootStillPutsAPostedIdOnItsPod) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);
  RootPodVerbs({"get"});  // the patch is refused until the test allows it

  auto root = StartSidecar(0, 1);
  httplib::Client client("127.0.0.1", root->api_port());
  client.set_read_timeout(seconds(1));  // a trainer that does not wait for the answer
  const std::string id = SomeId(7);
  auto posted = client.Post("/v1/id", id, "application/octet-stream");
  ASSERT_FALSE(posted) << "answered " << posted->status << " while the id could not be on the pod: " << posted->body;
  ASSERT_TRUE(testsupport::WaitFor([&] { return root->Log().find("could not annotate the root pod") != std::string::npos; },
                                   seconds(30))) << root->Log();

  auto exit_code = std::async(std::launch::async, [&] { return root->Terminate(seconds(40)); });
  ASSERT_TRUE(testsupport::WaitFor([&] { return root->Log().find("still reporting it before stopping") != std::string::npos; },
                                   seconds(10))) << root->Log();
  RootPodVerbs({"get", "patch"});
  EXPECT_EQ(exit_code.get(), 0) << root->Log();
  auto current = admin_->Get(kube::resources::kPods, ns_, std::string(kJob) + "-0");
  ASSERT_TRUE(current.ok());
  json annotations = (*current)["metadata"].value("annotations", json::object());
  EXPECT_EQ(annotations.value("nccl.dev/unique-id", ""), contract::Base64Encode(id)) << root->Log();
  EXPECT_EQ(annotations.value("nccl.dev/unique-id-attempt", ""), "1");
}

// The root gap (tests/chaos, root-sidecar): a root sidecar killed after it accepted the id and
// before the id was on its pod used to lose it (it had answered 200, so the trainer never posted
// again): the workers waited out the init timeout and the attempt restarted. Now the POST is
// answered only once the annotation is stored; a kill before that fails the POST, and the
// trainer's retry of the same id (runtime and Python clients retry a POST without an answer)
// reaches the restarted sidecar, which annotates the pod. Here RBAC refuses the patch until the
// test allows it, which holds the sidecar in the gap for as long as the test needs.
TEST_F(SidecarKubeTest, RootSidecarKilledBeforeAnnotatingLosesNoId) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);
  RootPodVerbs({"get"});

  auto first = StartSidecar(0, 1);
  const std::string listen = "127.0.0.1:" + std::to_string(first->api_port());  // the pod's fixed port
  const std::string id = SomeId(8);
  auto post = [&](SidecarProcess& sidecar) {
    httplib::Client client("127.0.0.1", sidecar.api_port());
    client.set_read_timeout(seconds(60));
    return client.Post("/v1/id", id, "application/octet-stream");
  };
  auto in_gap = std::async(std::launch::async, [&] { return post(*first); });
  ASSERT_TRUE(testsupport::WaitFor([&] { return first->Log().find("could not annotate the root pod") != std::string::npos; },
                                   seconds(30))) << first->Log();
  ASSERT_NE(first->Log().find("accepted the root id"), std::string::npos);
  // Accepted, not on the pod: the POST must not have been answered yet.
  ASSERT_EQ(in_gap.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "the POST was answered before the id was on the pod";
  first->Kill();
  auto lost = in_gap.get();
  EXPECT_FALSE(lost) << "answered " << lost->status << " by a sidecar that never stored the id";
  EXPECT_FALSE(RootPodAnnotations().contains("nccl.dev/unique-id"));

  // The kubelet restarts the native sidecar on the same port; the trainer posts the same id again.
  RootPodVerbs({"get", "patch"});
  auto second = StartSidecar(0, 1, listen, /*run=*/2);
  ASSERT_EQ(second->api_port(), first->api_port());
  auto answered = post(*second);
  ASSERT_TRUE(answered) << second->Log();
  ASSERT_EQ(answered->status, 200) << answered->body << second->Log();
  // 200 means stored: the annotation is there now, not eventually.
  json annotations = RootPodAnnotations();
  EXPECT_EQ(annotations.value("nccl.dev/unique-id", ""), contract::Base64Encode(id)) << second->Log();
  EXPECT_EQ(annotations.value("nccl.dev/unique-id-attempt", ""), "1");
  EXPECT_EQ(second->Terminate(), 0) << second->Log();
}

// A root sidecar restarted after it put the id on its pod (the kubelet restarts a native sidecar
// that crashed) reads the id back from its pod: one attempt keeps one id across restarts, so a
// different id is refused with 409 and the same one answered 200, the pod unchanged.
TEST_F(SidecarKubeTest, ARestartedRootHoldsTheIdAlreadyOnItsPod) {
  CreateRootPod();
  PublishConfigMap(1, std::nullopt);
  const std::string id = SomeId(9);
  auto first = StartSidecar(0, 1);
  const std::string listen = "127.0.0.1:" + std::to_string(first->api_port());
  {
    httplib::Client client("127.0.0.1", first->api_port());
    auto posted = client.Post("/v1/id", id, "application/octet-stream");
    ASSERT_TRUE(posted);
    ASSERT_EQ(posted->status, 200) << posted->body;
  }
  first->Kill();
  const std::string resource_version = [&] {
    auto pod = admin_->Get(kube::resources::kPods, ns_, std::string(kJob) + "-0");
    return pod.ok() ? (*pod)["metadata"].value("resourceVersion", "") : std::string();
  }();

  auto second = StartSidecar(0, 1, listen, /*run=*/2);
  httplib::Client client("127.0.0.1", second->api_port());
  client.set_read_timeout(seconds(30));
  // Posted at once: the POST waits for the sidecar to read its pod.
  auto other = client.Post("/v1/id", SomeId(10), "application/octet-stream");
  ASSERT_TRUE(other) << second->Log();
  EXPECT_EQ(other->status, 409) << other->body << second->Log();
  EXPECT_NE(other->body.find("a different id was already accepted for attempt 1"), std::string::npos) << other->body;
  auto same = client.Post("/v1/id", id, "application/octet-stream");
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 200) << same->body << second->Log();
  EXPECT_NE(second->Log().find("the root pod already carries the id of this attempt"), std::string::npos) << second->Log();

  json annotations = RootPodAnnotations();
  EXPECT_EQ(annotations.value("nccl.dev/unique-id", ""), contract::Base64Encode(id));
  EXPECT_EQ(annotations.value("nccl.dev/unique-id-attempt", ""), "1");
  auto pod = admin_->Get(kube::resources::kPods, ns_, std::string(kJob) + "-0");
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)["metadata"].value("resourceVersion", ""), resource_version) << "the pod was not written again";
  EXPECT_EQ(second->Terminate(), 0) << second->Log();
}

// The kubelet stops a pod's sidecar with SIGTERM when the pod ends and when it restarts the pod in
// place after its trainer failed; the pod's next start waits for the sidecar to end. It ends at
// once: it used to join its ConfigMap watch first, which notices a stop only at libcurl's next
// progress call (0.15 to 1.0 s a stop, 0.58 s on average over 6).
TEST_F(SidecarKubeTest, EndsAtOnceOnSigterm) {
  PublishConfigMap(1, SomeId(8));
  std::chrono::milliseconds total{0};
  std::string logs;
  for (int i = 0; i < 4; ++i) {
    auto worker = StartSidecar(1, 1, "", /*run=*/i);
    auto got = GetId(*worker, 30);  // its watch has delivered the ConfigMap and now waits
    ASSERT_TRUE(got);
    ASSERT_EQ(got->status, 200) << got->body << worker->Log();
    const auto signalled = std::chrono::steady_clock::now();
    EXPECT_EQ(worker->Terminate(), 0) << worker->Log();
    total += std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - signalled);
    logs += worker->Log();
  }
  std::printf("4 sidecars: %lld ms from SIGTERM to exit\n", static_cast<long long>(total.count()));
  EXPECT_LT(total, std::chrono::milliseconds(1000)) << "4 sidecars took " << total.count() << " ms from SIGTERM to exit\n"
                                                    << logs;
}

TEST_F(SidecarKubeTest, CarriesOnAcrossAnApiServerRestart) {
  PublishConfigMap(1, std::nullopt);
  auto worker = StartSidecar(1, 1);
  ASSERT_TRUE(BecomesReady(*worker)) << worker->Log();

  // The watch breaks while the API server is away; the sidecar reconnects with backoff and
  // still sees the publication made after it came back.
  std::string restart = std::string(NCCLOP_SOURCE_DIR) + "/tests/harness/controlplane/restart-apiserver.sh --dir " +
                        testsupport::ControlPlaneDir();
  auto restarted = testsupport::Run(restart);
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;

  const std::string id = SomeId(6);
  PublishConfigMap(1, id);
  auto got = GetId(*worker, 60);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body << worker->Log();
  EXPECT_EQ(json::parse(got->body)["id"], contract::Base64Encode(id));
  EXPECT_EQ(worker->Terminate(), 0) << worker->Log();
}

}  // namespace
}  // namespace sidecar_it

