// In place (--in-place-state): the kubelet restarts every container of a pod for the job's next
// attempt, so a sidecar learns the attempt it serves from its state file and the ConfigMap, not
// from NCCLJOB_ATTEMPT alone. The real binary against the real kube-apiserver; the test plays
// the operator (the ConfigMap), the kubelet (starts the process in the pod's env) and the pod's
// emptyDir (a temporary directory that outlives the processes).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "contract/names.h"
#include "contract/unique_id.h"
#include "id_annotation.h"
#include "raw_http.h"
#include "sidecar_kube_fixture.h"

namespace sidecar_it {
namespace {

constexpr char kWaitingLine[] = "waiting for the ConfigMap to name an attempt after the last one this pod served";

// A loopback port free now (bound and closed): the API port of a sidecar that binds it later.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Milliseconds since midnight of a log line's "ts" (RFC 3339, UTC, milliseconds).
int64_t MillisOfDay(const std::string& ts) {
  int hours = 0, minutes = 0, secs = 0, millis = 0;
  size_t at = ts.find('T');
  if (at == std::string::npos || std::sscanf(ts.c_str() + at + 1, "%d:%d:%d.%d", &hours, &minutes, &secs, &millis) != 4) {
    return -1;
  }
  return ((hours * 60 + minutes) * 60 + secs) * 1000LL + millis;
}

class SidecarInPlaceTest : public SidecarKubeTest {
 protected:
  void SetUp() override {
    SidecarKubeTest::SetUp();
    if (HasFatalFailure()) return;
    std::string pattern = std::string(::testing::TempDir()) + "/" + ns_ + "-state-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    state_dir_ = pattern;
  }

  void TearDown() override {
    unlink(StateFile().c_str());
    rmdir(state_dir_.c_str());
    SidecarKubeTest::TearDown();
  }

  std::string StateFile() const { return state_dir_ + "/attempt"; }

  void WriteState(int attempt) { std::ofstream(StateFile()) << attempt << "\n"; }

  std::string ReadState() const {
    std::ifstream in(StateFile());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // The sidecar of pod `index` created for `attempt`, in place, its API on `api_port` (0: the kernel's pick).
  std::unique_ptr<SidecarProcess> LaunchInPlace(int index, int attempt, int api_port = 0) {
    return LaunchSidecar(index, attempt,
                         {std::string(contract::kSidecarStateFlag) + "=" + state_dir_, "--listen",
                          "127.0.0.1:" + std::to_string(api_port)});
  }

  static int Status(int port, const std::string& path) {
    httplib::Client client("127.0.0.1", port);
    auto r = client.Get(path);
    return r ? r->status : -1;
  }

  std::string state_dir_;
};

// A pod restarted in place after it served attempt 2 (its trainer failed): the ConfigMap still
// names 2, with 2's id. The sidecar must not serve it: no API port, not ready, until the operator
// starts attempt 3; then it serves 3 and records it. The root reads its pod back for attempt 3
// only, so the id its pod still carries for 2 does not hold up or refuse 3's.
TEST_F(SidecarInPlaceTest, ARestartedPodWaitsForTheNextAttemptAndServesIt) {
  CreateRootPod();
  const std::string old_id = SomeId(20);
  auto annotated = admin_->Patch(kube::resources::kPods, ns_, std::string(kJob) + "-0", kube::PatchType::kMerge,
                                 sidecar::BuildIdAnnotationPatch(2, old_id));
  ASSERT_TRUE(annotated.ok()) << annotated.status().ToString();
  PublishConfigMap(2, old_id);
  WriteState(2);

  const int api_port = FreePort();
  auto root = LaunchInPlace(0, /*attempt=*/1, api_port);
  std::optional<json> waiting = root->WaitLogged(kWaitingLine);
  ASSERT_TRUE(waiting) << root->Log();
  EXPECT_EQ(waiting->value("last_served", ""), "2");
  const int probe_port = SidecarProcess::PortOf(waiting->value("probe_listen", ""));
  // It has seen attempt 2 in the ConfigMap, and still waits.
  ASSERT_TRUE(testsupport::WaitFor([&] { return root->Log().find("\"configmap_attempt\":\"2\"") != std::string::npos; },
                                   seconds(30))) << root->Log();
  EXPECT_EQ(Status(probe_port, "/healthz"), 200);
  EXPECT_EQ(Status(probe_port, "/readyz"), 503);
  EXPECT_FALSE(RawConnection(api_port).connected()) << "the API port is bound while the attempt is not known";
  EXPECT_FALSE(root->Exited());
  EXPECT_EQ(ReadState(), "2\n");

  PublishConfigMap(3, std::nullopt);  // the operator starts attempt 3
  ASSERT_TRUE(root->WaitStarted()) << root->Log();
  EXPECT_EQ(root->api_port(), api_port);
  std::optional<json> serving = root->WaitLogged("serving attempt");
  ASSERT_TRUE(serving);
  EXPECT_EQ(serving->value("attempt", ""), "3");
  EXPECT_EQ(serving->value("pod_created_for", ""), "1");
  EXPECT_EQ(ReadState(), "3\n");
  ASSERT_TRUE(BecomesReady(*root)) << root->Log();

  httplib::Client client("127.0.0.1", api_port);
  client.set_read_timeout(seconds(30));
  auto info = client.Get("/v1/info");
  ASSERT_TRUE(info);
  EXPECT_EQ(json::parse(info->body)["attempt"], 3);
  auto early = client.Get("/v1/id?timeout=0");
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 204) << "attempt 2's id served to attempt 3: " << early->body;
  const std::string new_id = SomeId(21);
  auto posted = client.Post("/v1/id", new_id, "application/octet-stream");
  ASSERT_TRUE(posted) << root->Log();
  ASSERT_EQ(posted->status, 200) << posted->body << root->Log();
  json annotations = RootPodAnnotations();
  EXPECT_EQ(annotations.value("nccl.dev/unique-id", ""), contract::Base64Encode(new_id));
  EXPECT_EQ(annotations.value("nccl.dev/unique-id-attempt", ""), "3");
  EXPECT_EQ(root->Terminate(), 0) << root->Log();
}

// While serving attempt 4, the operator starts attempt 5: the waiting long-poll gets 410 and the
// sidecar exits 85 at once, so that the pod's restart rule restarts its containers for 5.
TEST_F(SidecarInPlaceTest, ASidecarExitsWhenALaterAttemptStarts) {
  PublishConfigMap(4, std::nullopt);
  WriteState(3);
  auto worker = LaunchInPlace(1, /*attempt=*/1);
  ASSERT_TRUE(worker->WaitStarted()) << worker->Log();
  ASSERT_TRUE(BecomesReady(*worker)) << worker->Log();
  EXPECT_EQ(ReadState(), "4\n");

  auto poll = std::async(std::launch::async, [&] { return GetId(*worker, 60); });
  ASSERT_TRUE(worker->WaitLogged("a long-poll waits for the id")) << worker->Log();

  const auto writing = std::chrono::steady_clock::now();
  PublishConfigMap(5, std::nullopt);
  const int exit_code = worker->WaitExit(std::chrono::seconds(10));
  const auto exited_after = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - writing);
  ASSERT_EQ(exit_code, contract::kSidecarExitAttemptOver) << worker->Log();
  EXPECT_LT(exited_after, std::chrono::milliseconds(2000)) << worker->Log();
  // Inside the process: from the watch event's line to the exit's (both logged, ms resolution).
  std::optional<json> event, over;
  for (json& line : worker->LogLines()) {
    if (!event && line.value("configmap_attempt", "") == "5") event = line;
    if (line.value("msg", "") == "attempt over") over = line;
  }
  ASSERT_TRUE(event && over) << worker->Log();
  const int64_t in_process_ms = MillisOfDay(over->value("ts", "")) - MillisOfDay(event->value("ts", ""));
  EXPECT_LT(in_process_ms, 100) << worker->Log();
  std::cout << "exited " << exited_after.count() << " ms after the ConfigMap write was sent; " << in_process_ms
            << " ms from the watch event to the exit\n";
  EXPECT_EQ(over->value("attempt", ""), "4");
  EXPECT_EQ(over->value("configmap_attempt", ""), "5");

  auto answered = poll.get();
  ASSERT_TRUE(answered) << worker->Log();
  EXPECT_EQ(answered->status, 410) << answered->body;
  EXPECT_EQ(ReadState(), "4\n");  // the next start waits for an attempt after 4: it serves 5
}

// A pod's first start (no state file) serves the attempt the pod was created for, as without the
// flag, and records it; a later start of the same pod, still in that attempt, waits, and stops
// cleanly on SIGTERM meanwhile.
TEST_F(SidecarInPlaceTest, AFirstStartServesThePodsAttempt) {
  const std::string id = SomeId(22);
  PublishConfigMap(2, id);
  auto first = LaunchInPlace(1, /*attempt=*/2);
  ASSERT_TRUE(first->WaitStarted()) << first->Log();
  std::optional<json> waiting = first->WaitLogged(kWaitingLine);
  ASSERT_TRUE(waiting);
  EXPECT_EQ(waiting->value("last_served", ""), "1");
  auto got = GetId(*first, 30);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200) << got->body << first->Log();
  EXPECT_EQ(json::parse(got->body)["id"], contract::Base64Encode(id));
  EXPECT_EQ(json::parse(got->body)["attempt"], 2);
  EXPECT_EQ(ReadState(), "2\n");
  EXPECT_EQ(first->Terminate(), 0) << first->Log();

  auto again = LaunchSidecar(1, 2, {std::string(contract::kSidecarStateFlag) + "=" + state_dir_}, /*run=*/2);
  ASSERT_TRUE(again->WaitLogged(kWaitingLine)) << again->Log();
  ASSERT_TRUE(testsupport::WaitFor([&] { return again->Log().find("\"configmap_attempt\":\"2\"") != std::string::npos; },
                                   seconds(30))) << again->Log();
  EXPECT_EQ(again->Log().find("\"msg\":\"started\""), std::string::npos) << again->Log();
  EXPECT_EQ(again->Terminate(), 0) << again->Log();
}

// A pod whose trainer dies while its sidecar's first start still waits for the ConfigMap (not
// there yet): the kubelet restarts every container, and by then the ConfigMap names the pod's
// attempt. That attempt is over for this pod (the operator counts the restart as its failure), so
// the restarted sidecar must not serve it: it waits, and serves the next one.
TEST_F(SidecarInPlaceTest, ARestartBeforeTheFirstStartServedWaitsForTheNextAttempt) {
  auto first = LaunchInPlace(1, /*attempt=*/1);
  std::optional<json> waiting = first->WaitLogged(kWaitingLine);
  ASSERT_TRUE(waiting) << first->Log();
  EXPECT_EQ(waiting->value("last_served", ""), "0");
  EXPECT_EQ(ReadState(), "1\n") << "the first start records the attempt it entered before it serves";
  first->Kill();

  PublishConfigMap(1, SomeId(23));
  auto again = LaunchSidecar(1, 1, {std::string(contract::kSidecarStateFlag) + "=" + state_dir_}, /*run=*/2);
  std::optional<json> rewaiting = again->WaitLogged(kWaitingLine);
  ASSERT_TRUE(rewaiting) << again->Log();
  EXPECT_EQ(rewaiting->value("last_served", ""), "1");
  ASSERT_TRUE(testsupport::WaitFor([&] { return again->Log().find("\"configmap_attempt\":\"1\"") != std::string::npos; },
                                   seconds(30))) << again->Log();
  EXPECT_EQ(again->Log().find("\"msg\":\"started\""), std::string::npos) << "served the attempt that failed: " << again->Log();
  EXPECT_FALSE(again->Exited()) << again->Log();

  PublishConfigMap(2, std::nullopt);  // the operator starts attempt 2
  std::optional<json> serving = again->WaitLogged("serving attempt");
  ASSERT_TRUE(serving) << again->Log();
  EXPECT_EQ(serving->value("attempt", ""), "2");
  EXPECT_EQ(ReadState(), "2\n");
  EXPECT_EQ(again->Terminate(), 0) << again->Log();
}

}  // namespace
}  // namespace sidecar_it
