// Progress reports: the datagram's text, and a real UDP socket on loopback playing the sidecar.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "contract/names.h"
#include "nccl_k8s/nccl_k8s.h"
#include "progress_sender.h"

namespace nccl_k8s {
namespace {

std::string Format(int64_t rank, int64_t step, std::optional<int64_t> total, std::vector<Metric> metrics,
                   bool done = false) {
  char out[contract::kProgressReportMaxBytes];
  return std::string(out, FormatProgressReport(out, rank, step, total, metrics, done));
}

TEST(ProgressReport, WritesTheContractsFields) {
  EXPECT_EQ(Format(3, 1234, 5000, {{"loss", 0.25}, {"tokens", 1e6}}),
            R"({"rank":3,"step":1234,"total":5000,"metrics":{"loss":0.25,"tokens":1e+06}})");
  EXPECT_EQ(Format(0, 7, std::nullopt, {}), R"({"rank":0,"step":7})");
  EXPECT_EQ(Format(1, 9, 9, {}, /*done=*/true), R"({"rank":1,"step":9,"total":9,"done":true})");
}

TEST(ProgressReport, LeavesOutMetricsThatBreakTheRules) {
  const std::string long_name(contract::kProgressMetricNameMax + 1, 'n');
  EXPECT_EQ(Format(0, 1, std::nullopt,
                   {{"nan", std::nan("")}, {"inf", INFINITY}, {"", 1}, {long_name, 1}, {"bad\n", 1}, {"ok", 2}}),
            R"({"rank":0,"step":1,"metrics":{"ok":2}})");
  EXPECT_EQ(Format(0, 1, std::nullopt, {{"a\"b\\c", 1}}), R"({"rank":0,"step":1,"metrics":{"a\"b\\c":1}})");
}

TEST(ProgressReport, SendsAtMostTheContractsMetricsAndNeverPassesItsSize) {
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) names.push_back(std::string(contract::kProgressMetricNameMax - 2, 'a' + i) + "\"\"");
  std::vector<Metric> metrics;
  for (const std::string& name : names) metrics.push_back({name, -1.2345678901234567e-300});
  std::string report = Format(INT64_MAX, INT64_MAX, INT64_MAX, metrics, /*done=*/true);
  EXPECT_LE(report.size(), contract::kProgressReportMaxBytes);
  EXPECT_EQ(report.substr(report.size() - 13), ",\"done\":true}");
  size_t sent = 0;
  for (size_t at = report.find(":-1.2"); at != std::string::npos; at = report.find(":-1.2", at + 1)) ++sent;
  EXPECT_GE(sent, 1u);
  EXPECT_LE(sent, static_cast<size_t>(contract::kProgressMaxMetrics));
}

// A UDP socket on a free loopback port: the sidecar's end.
class FakeSidecar {
 public:
  FakeSidecar() {
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(addr);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &size);
    port_ = ntohs(addr.sin_port);
  }
  ~FakeSidecar() { close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // The next datagram, or "" when none comes within the timeout.
  std::string Receive(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(timeout.count())) != 1) return "";
    char buffer[2048];
    ssize_t got = recv(fd_, buffer, sizeof(buffer), 0);
    return got > 0 ? std::string(buffer, got) : "";
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

EnvLookup PodEnv(std::map<std::string, std::string> env) {
  return [env = std::move(env)](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
}

std::map<std::string, std::string> JobEnvOf(const std::string& url, int index = 1, int gpus = 4) {
  return {{"NCCLJOB_INDEX", std::to_string(index)}, {"NCCLJOB_WORLD_SIZE", std::to_string(2 * std::max(gpus, 1))},
          {"NCCLJOB_GPUS_PER_POD", std::to_string(gpus)}, {"NCCLJOB_ATTEMPT", "1"}, {"NCCLJOB_SIDECAR_URL", url}};
}

TEST(ProgressSender, SendsOneDatagramPerReportWithItsRank) {
  FakeSidecar sidecar;
  ProgressSender sender(PodEnv(JobEnvOf(sidecar.url())));
  ASSERT_TRUE(sender.enabled());
  const Metric metrics[] = {{"loss", 1.5}};
  sender.Report(10, 100, metrics);
  EXPECT_EQ(sidecar.Receive(), R"({"rank":4,"step":10,"total":100,"metrics":{"loss":1.5}})");
  sender.Report(11, std::nullopt, {});
  EXPECT_EQ(sidecar.Receive(), R"({"rank":4,"step":11})");
  sender.Done();
  EXPECT_EQ(sidecar.Receive(), R"({"rank":4,"step":11,"done":true})");
}

TEST(ProgressSender, EachProcessOfAPodReportsItsLocalRank) {
  FakeSidecar sidecar;
  auto env = JobEnvOf(sidecar.url());
  env["LOCAL_RANK"] = "3";
  ProgressSender(PodEnv(env)).Report(1, std::nullopt, {});
  EXPECT_EQ(sidecar.Receive(), R"({"rank":7,"step":1})");
  env["LOCAL_RANK"] = "4";  // not a local rank of a pod of 4 GPUs: the pod's first
  ProgressSender(PodEnv(env)).Report(1, std::nullopt, {});
  EXPECT_EQ(sidecar.Receive(), R"({"rank":4,"step":1})");
}

TEST(ProgressSender, WithoutTheJobEnvOrASidecarNothingHappens) {
  ProgressSender no_env(PodEnv({}));
  EXPECT_FALSE(no_env.enabled());
  no_env.Report(1, std::nullopt, {});
  no_env.Done();

  std::string url;
  {
    FakeSidecar gone;
    url = gone.url();
  }
  ProgressSender no_sidecar(PodEnv(JobEnvOf(url)));
  const auto started = std::chrono::steady_clock::now();
  for (int step = 0; step < 1000; ++step) no_sidecar.Report(step, std::nullopt, {});  // refused: dropped
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

TEST(ProgressSender, TheCApiReportsThroughTheProcessEnv) {
  FakeSidecar sidecar;
  for (const auto& [name, value] : JobEnvOf(sidecar.url(), /*index=*/0, /*gpus=*/0)) setenv(name.c_str(), value.c_str(), 1);
  const char* names[] = {"loss"};
  const double values[] = {0.5};
  EXPECT_EQ(nccl_k8s_report_progress(5, -1, names, values, 1), NCCL_K8S_OK);
  EXPECT_EQ(sidecar.Receive(), R"({"rank":0,"step":5,"metrics":{"loss":0.5}})");
  EXPECT_EQ(nccl_k8s_report_progress_done(), NCCL_K8S_OK);
  EXPECT_EQ(sidecar.Receive(), R"({"rank":0,"step":5,"done":true})");
  EXPECT_EQ(nccl_k8s_report_progress(1, 2, nullptr, nullptr, 1), NCCL_K8S_INVALID_ARGUMENT);
  EXPECT_EQ(sidecar.Receive(std::chrono::milliseconds(50)), "");
}

}  // namespace
}  // namespace nccl_k8s
