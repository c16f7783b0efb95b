// Progress reports and stalls (docs/contracts.md, "Progress"): the real binary against the real
// kube-apiserver. The test plays the trainers (UDP datagrams to the sidecar's API port), the
// operator (reads the annotation) and the kubelet (the termination message file, the exit code).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "contract/names.h"
#include "sidecar_kube_fixture.h"

namespace sidecar_it {
namespace {

using std::chrono::milliseconds;

constexpr int kStallTimeoutSeconds = 2;

// A trainer's end: datagrams to the sidecar's API port on loopback.
class Reporter {
 public:
  explicit Reporter(int port) : fd_(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    to_.sin_family = AF_INET;
    to_.sin_port = htons(static_cast<uint16_t>(port));
    to_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  }
  ~Reporter() { close(fd_); }
  void Send(int rank, int64_t step, const std::string& extra = "") {
    std::string datagram = R"({"rank":)" + std::to_string(rank) + R"(,"step":)" + std::to_string(step) + extra + "}";
    sendto(fd_, datagram.data(), datagram.size(), 0, reinterpret_cast<const sockaddr*>(&to_), sizeof(to_));
  }

 private:
  int fd_;
  sockaddr_in to_{};
};

class SidecarProgressTest : public SidecarKubeTest {
 protected:
  std::string TerminationLog() const { return std::string(::testing::TempDir()) + "/" + ns_ + "-termination-log"; }

  std::unique_ptr<SidecarProcess> StartWatching(int index) {
    auto sidecar = LaunchSidecar(index, /*attempt=*/1,
                                 {std::string(contract::kSidecarStallTimeoutFlag) + "=" +
                                      std::to_string(kStallTimeoutSeconds),
                                  "--termination-log", TerminationLog()});
    EXPECT_TRUE(sidecar->WaitStarted()) << sidecar->Log();
    return sidecar;
  }

  static json Progress(SidecarProcess& sidecar) {
    httplib::Client client("127.0.0.1", sidecar.api_port());
    auto r = client.Get(std::string(contract::kPathProgress));
    return r && r->status == 200 ? json::parse(r->body) : json();
  }

  std::optional<json> ProgressAnnotation() {
    json annotations = RootPodAnnotations();
    if (!annotations.contains(contract::kAnnotationProgress)) return std::nullopt;
    return json::parse(annotations[std::string(contract::kAnnotationProgress)].get<std::string>());
  }

  std::string ReadTerminationLog() const {
    std::ifstream in(TerminationLog());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

// Pod 0 puts the newest report on its pod; a burst of reports costs no more pod writes than the
// annotation's interval allows (counted as the pod's writes that changed the annotation, by a
// watch: the API server's view, whatever else may write the pod meanwhile).
TEST_F(SidecarProgressTest, PodZeroPutsTheNewestReportOnItsPodAtMostOnceAnInterval) {
  CreateRootPod();
  auto pod = admin_->Get(kube::resources::kPods, ns_, std::string(kJob) + "-0");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  std::mutex mu;
  std::vector<std::chrono::steady_clock::time_point> writes;  // guarded by mu: each a new annotation
  std::jthread watcher([&](std::stop_token stop) {
    kube::WatchOptions options;
    options.field_selector = "metadata.name=" + std::string(kJob) + "-0";
    options.resource_version = (*pod)["metadata"]["resourceVersion"].get<std::string>();
    std::string annotation;
    admin_->Watch(kube::resources::kPods, ns_, options, [&](kube::WatchEvent&& event) {
      if (event.type != kube::EventType::kModified) return true;
      std::string now = event.object["metadata"].value("annotations", json::object())
                            .value(std::string(contract::kAnnotationProgress), "");
      if (now != annotation) {
        std::lock_guard<std::mutex> lock(mu);
        writes.push_back(std::chrono::steady_clock::now());
      }
      annotation = now;
      return true;
    }, stop);
  });
  auto sidecar = StartSidecar(0, /*attempt=*/1);
  Reporter trainer(sidecar->api_port());

  trainer.Send(0, 1, R"(,"total":100000,"metrics":{"loss":2.5})");
  ASSERT_TRUE(testsupport::WaitFor([&] {
    auto annotation = ProgressAnnotation();
    return annotation && annotation->value("step", -1) == 1;
  }, std::chrono::seconds(10))) << sidecar->Log();
  json first = *ProgressAnnotation();
  EXPECT_EQ(first["attempt"], 1);
  EXPECT_EQ(first["total"], 100000);
  EXPECT_EQ(first["metrics"]["loss"], 2.5);
  EXPECT_TRUE(first["time"].is_string());

  // The burst: as many reports as one sender makes in 2 s, from both of the pod's ranks.
  const auto burst_start = std::chrono::steady_clock::now();
  int64_t step = 1;
  while (std::chrono::steady_clock::now() - burst_start < std::chrono::seconds(2)) {
    ++step;
    trainer.Send(static_cast<int>(step % 2), step);
    if (step % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // let the kernel buffer drain
  }
  const auto burst_end = std::chrono::steady_clock::now();
  std::cout << "burst: " << step - 1 << " reports in "
            << std::chrono::duration_cast<milliseconds>(burst_end - burst_start).count() << " ms; sidecar received "
            << Progress(*sidecar).value("received", 0) << "\n";
  // The kernel drops what a full socket buffer cannot take, the burst's last report too maybe:
  // it is sent again until it lands, as a trainer's next report would.
  ASSERT_TRUE(testsupport::WaitFor([&] {
    trainer.Send(static_cast<int>(step % 2), step);
    auto annotation = ProgressAnnotation();
    return annotation && annotation->value("step", -1) == step;
  }, std::chrono::seconds(contract::kProgressAnnotationSeconds + 5))) << sidecar->Log();
  EXPECT_FALSE(ProgressAnnotation()->contains("total"));  // the newest report had none

  std::lock_guard<std::mutex> lock(mu);
  int during_burst = 0;
  for (const auto& when : writes) during_burst += when >= burst_start;
  const int allowed = (2 + contract::kProgressAnnotationSeconds - 1) / contract::kProgressAnnotationSeconds + 1;
  std::cout << "pod writes from the burst's start to its last step on the pod: " << during_burst << " (allowed "
            << allowed << ")\n";
  EXPECT_GE(during_burst, 1);
  EXPECT_LE(during_burst, allowed);
  EXPECT_EQ(sidecar->Terminate(), 0);
}

// Without the right to patch its pod, pod 0 says so once per streak and tries again at each
// interval; once allowed, the report lands. The id API is served meanwhile.
TEST_F(SidecarProgressTest, AFailedPatchIsLoggedOnceAndTriedAgain) {
  CreateRootPod();
  RootPodVerbs({"get"});
  auto sidecar = StartSidecar(0, /*attempt=*/1);
  Reporter trainer(sidecar->api_port());
  int64_t step = 0;
  auto count = [&](const std::string& msg) {
    int n = 0;
    for (const json& line : sidecar->LogLines()) n += line.value("msg", "") == msg;
    return n;
  };
  // Each new step makes the next interval's value differ, so every interval tries again.
  auto report_until = [&](const std::function<bool()>& condition, std::chrono::seconds timeout) {
    return testsupport::WaitFor([&] {
      trainer.Send(0, ++step);
      return condition();
    }, timeout, milliseconds(200));
  };
  ASSERT_TRUE(report_until([&] { return count("still cannot put the progress on the pod") >= 1; },
                           std::chrono::seconds(3 * contract::kProgressAnnotationSeconds)))
      << sidecar->Log();
  EXPECT_EQ(count("could not put the progress on the pod; trying again at the next interval"), 1);
  httplib::Client client("127.0.0.1", sidecar->api_port());
  auto info = client.Get(std::string(contract::kPathInfo));
  ASSERT_TRUE(info && info->status == 200);

  RootPodVerbs({"get", "patch"});
  ASSERT_TRUE(report_until([&] { return ProgressAnnotation().has_value(); },
                           std::chrono::seconds(3 * contract::kProgressAnnotationSeconds)))
      << sidecar->Log();
  EXPECT_GE(ProgressAnnotation()->value("step", -1), 1);
  EXPECT_TRUE(sidecar->WaitLogged("put the progress on the pod again"));
  EXPECT_EQ(sidecar->Terminate(), 0);
}

// Reports, then silence: the sidecar exits 86 soon after the timeout, and its termination
// message names the rank and its last step.
TEST_F(SidecarProgressTest, ASilentRankEndsTheAttemptWithItsReason) {
  auto sidecar = StartWatching(1);
  Reporter trainer(sidecar->api_port());
  std::chrono::steady_clock::time_point last_report;
  for (int step = 1; step <= 5; ++step) {
    if (step > 1) std::this_thread::sleep_for(milliseconds(100));  // a trainer's pace, not a wait for the sidecar
    last_report = std::chrono::steady_clock::now();
    trainer.Send(1, step);
  }
  ASSERT_TRUE(testsupport::WaitFor([&] { return Progress(*sidecar)["ranks"].size() == 1; }, std::chrono::seconds(5)));
  const int code = sidecar->WaitExit(std::chrono::seconds(kStallTimeoutSeconds + 5));
  const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - last_report);
  std::cout << "exited " << code << " " << took.count() << " ms after the last report\n";
  EXPECT_EQ(code, contract::kSidecarExitStalled) << sidecar->Log();
  EXPECT_GE(took, std::chrono::seconds(kStallTimeoutSeconds));
  EXPECT_LE(took, std::chrono::seconds(kStallTimeoutSeconds) + milliseconds(1500));
  const std::string reason = ReadTerminationLog();
  EXPECT_NE(reason.find("rank 1 sent no progress report for 2s (last step 5 at "), std::string::npos) << reason;
  std::optional<json> logged = sidecar->WaitLogged("a rank stalled; ending the attempt", std::chrono::seconds(1));
  ASSERT_TRUE(logged) << sidecar->Log();
  EXPECT_EQ((*logged)["reason"], reason);
}

// A rank that never reported is not watched: the sidecar still runs after three timeouts. Pod
// 0's, which also asks NCCL's health report, finds no NCCL here and reads nothing into that.
TEST_F(SidecarProgressTest, ARankThatNeverReportedNeverStalls) {
  CreateRootPod();
  auto sidecar = StartWatching(0);
  EXPECT_EQ(sidecar->WaitExit(std::chrono::seconds(3 * kStallTimeoutSeconds)), -1) << sidecar->Log();
  EXPECT_EQ(sidecar->Terminate(), 0);
  EXPECT_EQ(ReadTerminationLog(), "");
}

// A rank that said done is no longer watched.
TEST_F(SidecarProgressTest, ARankThatSaidDoneIsNotStalled) {
  auto sidecar = StartWatching(1);
  Reporter trainer(sidecar->api_port());
  trainer.Send(1, 7);
  trainer.Send(1, 7, R"(,"done":true)");
  ASSERT_TRUE(testsupport::WaitFor([&] {
    json ranks = Progress(*sidecar)["ranks"];
    return ranks.size() == 1 && ranks[0].value("done", false);
  }, std::chrono::seconds(5))) << Progress(*sidecar).dump();
  EXPECT_EQ(sidecar->WaitExit(std::chrono::seconds(3 * kStallTimeoutSeconds)), -1) << sidecar->Log();
  json rank = Progress(*sidecar)["ranks"][0];
  EXPECT_EQ(rank["rank"], 1);
  EXPECT_EQ(rank["step"], 7);
  EXPECT_EQ(sidecar->Terminate(), 0);
}

}  // namespace
}  // namespace sidecar_it
