// The real nccl-sidecar binary in --standalone mode (no API server): the setup the GPU machine
// uses, one root and one worker sidecar process on loopback.
#include <chrono>
#include <cstdlib>
#include <future>
#include <string>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "contract/unique_id.h"
#include "sidecar_process.h"

namespace sidecar_it {
namespace {

using nlohmann::json;

Env PodEnv(int index, int attempt) {
  return {{"NCCLJOB_NAME", "local"}, {"NCCLJOB_INDEX", std::to_string(index)}, {"NCCLJOB_REPLICAS", "2"},
          {"NCCLJOB_GPUS_PER_POD", "1"}, {"NCCLJOB_ATTEMPT", std::to_string(attempt)}, {"NCCLJOB_UID", "uid-local"}};
}

std::string LogPath(const std::string& name) {
  return std::string(::testing::TempDir()) + "/sidecar-standalone-" + name + ".log";
}

std::string SomeId(char seed) {
  std::string id(128, '\0');
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(seed * 31 + i);
  return id;
}

std::string ExpectedBase64(const std::string& id) { return contract::Base64Encode(id); }

TEST(SidecarStandalone, WorkerGetsTheRootsIdAndBothStopOnSigterm) {
  SidecarProcess root(NCCL_SIDECAR_BIN, PodEnv(0, 1), {"--standalone"}, LogPath("root"));
  ASSERT_TRUE(root.WaitStarted()) << root.Log();
  SidecarProcess worker(NCCL_SIDECAR_BIN, PodEnv(1, 1), {"--standalone", "--peer-url", root.api_url()},
                        LogPath("worker"));
  ASSERT_TRUE(worker.WaitStarted()) << worker.Log();

  httplib::Client root_client("127.0.0.1", root.api_port());
  httplib::Client worker_client("127.0.0.1", worker.api_port());
  worker_client.set_read_timeout(std::chrono::seconds(40));
  auto early = worker_client.Get("/v1/id?timeout=0");
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 204);

  std::string id = SomeId(1);
  auto posted = root_client.Post("/v1/id", id, "application/octet-stream");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 200) << posted->body;

  auto got = worker_client.Get("/v1/id?timeout=30");
  ASSERT_TRUE(got);
  ASSERT_EQ(got->status, 200);
  json body = json::parse(got->body);
  EXPECT_EQ(body["id"], ExpectedBase64(id));
  EXPECT_EQ(body["attempt"], 1);
  EXPECT_EQ(body["job"], "local");
  EXPECT_EQ(body["jobUID"], "uid-local");

  httplib::Client probe("127.0.0.1", worker.probe_port());
  auto ready = probe.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);

  // The id is never logged, in any form.
  for (SidecarProcess* p : {&root, &worker}) {
    EXPECT_EQ(p->Log().find(ExpectedBase64(id).substr(0, 24)), std::string::npos);
    EXPECT_EQ(p->Log().find(id.substr(0, 24)), std::string::npos);
  }
  EXPECT_EQ(worker.Terminate(), 0) << worker.Log();
  EXPECT_EQ(root.Terminate(), 0) << root.Log();
}

TEST(SidecarStandalone, WorkerOfAnOlderAttemptIsToldItIsStale) {
  SidecarProcess root(NCCL_SIDECAR_BIN, PodEnv(0, 2), {"--standalone"}, LogPath("root2"));
  ASSERT_TRUE(root.WaitStarted()) << root.Log();
  SidecarProcess worker(NCCL_SIDECAR_BIN, PodEnv(1, 1), {"--standalone", "--peer-url", root.api_url()},
                        LogPath("worker1"));
  ASSERT_TRUE(worker.WaitStarted()) << worker.Log();
  httplib::Client root_client("127.0.0.1", root.api_port());
  auto posted = root_client.Post("/v1/id", SomeId(2), "application/octet-stream");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 200);
  httplib::Client worker_client("127.0.0.1", worker.api_port());
  worker_client.set_read_timeout(std::chrono::seconds(40));
  auto got = worker_client.Get("/v1/id?timeout=30");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, 410);
  EXPECT_EQ(got->body.find(ExpectedBase64(SomeId(2))), std::string::npos);
}

TEST(SidecarStandalone, LongPollInFlightIsAnsweredOnSigterm) {
  SidecarProcess root(NCCL_SIDECAR_BIN, PodEnv(0, 1), {"--standalone"}, LogPath("root3"));
  ASSERT_TRUE(root.WaitStarted()) << root.Log();
  httplib::Client client("127.0.0.1", root.api_port());
  client.set_read_timeout(std::chrono::seconds(60));
  auto started = std::chrono::steady_clock::now();
  auto poll = std::async(std::launch::async, [&] { return client.Get("/v1/id?timeout=60"); });
  // Once the probe answers the server is up; the poll may or may not have arrived yet, and
  // either way SIGTERM must end the process well before the poll's own timeout.
  httplib::Client probe("127.0.0.1", root.probe_port());
  ASSERT_TRUE(probe.Get("/healthz"));
  EXPECT_EQ(root.Terminate(std::chrono::seconds(20)), 0) << root.Log();
  poll.wait();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
}

TEST(SidecarStandalone, BadEnvironmentExitsWith2AndNamesTheVariable) {
  Env env = PodEnv(1, 1);
  env["NCCLJOB_REPLICAS"] = "zero";
  SidecarProcess bad(NCCL_SIDECAR_BIN, env, {"--standalone", "--peer-url", "http://127.0.0.1:1"}, LogPath("bad"));
  EXPECT_FALSE(bad.WaitStarted());
  EXPECT_EQ(bad.Terminate(), 2);
  EXPECT_NE(bad.Log().find("NCCLJOB_REPLICAS"), std::string::npos);
}

}  // namespace
}  // namespace sidecar_it
