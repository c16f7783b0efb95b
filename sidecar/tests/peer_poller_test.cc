// Standalone mode: a non-root sidecar's poller against a real root sidecar API server.
#include "peer_poller.h"

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "api_server.h"
#include "fake_id_source.h"
#include "standalone_root_id_source.h"

namespace sidecar {
namespace {

Config PodConfig(int index, int64_t attempt) {
  Config c;
  c.job = "demo";
  c.index = index;
  c.replicas = 2;
  c.world_size = 2;
  c.attempt = attempt;
  c.standalone = true;
  c.listen = {"127.0.0.1", 0};
  return c;
}

// The board's answer for `attempt` once it is not "nothing yet", or kTimeout at the deadline.
WaitResult AwaitAnswer(const IdBoard& board, int64_t attempt, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  WaitResult r = board.Check(attempt);
  while (r.outcome == WaitOutcome::kTimeout && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    r = board.Check(attempt);
  }
  return r;
}

// The root sidecar in standalone mode: what its trainer POSTs goes on its own board.
class StandaloneRoot {
 public:
  explicit StandaloneRoot(int64_t attempt)
      : config_(PodConfig(0, attempt)), source_(config_, board_), server_(config_, board_, source_) {
    port_ = server_.Bind(config_.listen);
    server_.Start();
  }
  ~StandaloneRoot() {
    board_.Close();
    server_.Stop();
  }
  int port() const { return port_; }
  int waiting() const { return server_.waiting(); }
  void PostId(const std::string& id) {
    httplib::Client client("127.0.0.1", port_);
    auto res = client.Post("/v1/id", id, "application/octet-stream");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
  }

 private:
  Config config_;
  IdBoard board_;
  StandaloneRootIdSource source_;
  ApiServer server_;
  int port_ = -1;
};

TEST(PeerPoller, CarriesTheRootsIdToTheWorkersBoard) {
  StandaloneRoot root(1);
  Config worker = PodConfig(1, 1);
  worker.peer_url = "http://127.0.0.1:" + std::to_string(root.port());
  IdBoard board;
  PeerPoller poller(worker, board);
  poller.Start();
  std::string id(128, 'p');
  root.PostId(id);
  WaitResult r = AwaitAnswer(board, 1, std::chrono::seconds(20));
  ASSERT_EQ(r.outcome, WaitOutcome::kReady);
  EXPECT_EQ(r.published.id, id);
  EXPECT_TRUE(poller.ready());
  poller.Stop();
}

TEST(PeerPoller, ALaterRootAttemptMakesTheWorkerStale) {
  StandaloneRoot root(2);
  Config worker = PodConfig(1, 1);
  worker.peer_url = "http://127.0.0.1:" + std::to_string(root.port());
  IdBoard board;
  PeerPoller poller(worker, board);
  poller.Start();
  root.PostId(std::string(128, 'q'));
  EXPECT_EQ(AwaitAnswer(board, 1, std::chrono::seconds(20)).outcome, WaitOutcome::kStale);
}

TEST(PeerPoller, StopsPromptlyWhileALongPollIsInFlight) {
  StandaloneRoot root(1);
  Config worker = PodConfig(1, 1);
  worker.peer_url = "http://127.0.0.1:" + std::to_string(root.port());
  IdBoard board;
  PeerPoller poller(worker, board);
  poller.Start();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  // The root holds the worker's long-poll once its server has a waiting request.
  while (root.waiting() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(root.waiting(), 1);
  auto started = std::chrono::steady_clock::now();
  poller.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

// Standalone with two bootstrap roots: pods 0 and 1 of 2 are both roots; each root sidecar
// serves its own trainer's id on GET /v1/root-id and every sidecar gathers the list.
class StandaloneTwoRoots {
 public:
  StandaloneTwoRoots() {
    for (int i = 0; i < 2; ++i) {
      configs_[i] = PodConfig(i, 1);
      configs_[i].bootstrap_roots = 2;
      servers_[i] = std::make_unique<ApiServer>(configs_[i], boards_[i], sources_[i]);
      ports_[i] = servers_[i]->Bind(configs_[i].listen);
      servers_[i]->Start();
    }
  }
  ~StandaloneTwoRoots() {
    for (int i = 0; i < 2; ++i) {
      boards_[i].Close();
      servers_[i]->Stop();
    }
  }
  std::vector<std::string> urls() const {
    return {"http://127.0.0.1:" + std::to_string(ports_[0]), "http://127.0.0.1:" + std::to_string(ports_[1])};
  }
  void PostId(int root, const std::string& id) {
    httplib::Client client("127.0.0.1", ports_[root]);
    auto res = client.Post("/v1/id", id, "application/octet-stream");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
  }

 private:
  Config configs_[2];
  IdBoard boards_[2];
  FakeIdSource sources_[2];  // what the roots' own sidecars gather is not under test here
  std::unique_ptr<ApiServer> servers_[2];
  int ports_[2] = {-1, -1};
};

TEST(PeerPoller, GathersEveryRootsIdInRootOrder) {
  StandaloneTwoRoots roots;
  Config pod = PodConfig(1, 1);
  pod.bootstrap_roots = 2;
  pod.root_urls = roots.urls();
  IdBoard board;
  PeerPoller poller(pod, board);
  poller.Start();
  const std::string a(128, 'a'), b(128, 'b');
  roots.PostId(1, b);  // root 1 first: the list still comes in root order
  EXPECT_EQ(AwaitAnswer(board, 1, std::chrono::milliseconds(300)).outcome, WaitOutcome::kTimeout) << "one of two";
  roots.PostId(0, a);
  WaitResult r = AwaitAnswer(board, 1, std::chrono::seconds(20));
  ASSERT_EQ(r.outcome, WaitOutcome::kReady);
  EXPECT_EQ(r.published.id, a + b);
  poller.Stop();
}

TEST(PeerPoller, RootIdIsOnlyServedByAStandaloneRootOfSeveral) {
  Config one_root = PodConfig(0, 1);
  IdBoard board;
  StandaloneRootIdSource source(one_root, board);
  ApiServer server(one_root, board, source);
  int port = server.Bind(one_root.listen);
  server.Start();
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get("/v1/root-id?timeout=1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  board.Close();
  server.Stop();
}

TEST(PeerPoller, KeepsTryingWhileTheRootIsNotUpYet) {
  // A port nobody listens on: bind and close one to find it.
  int free_port;
  {
    HttpServer probe("test", {}, "");
    free_port = probe.Bind({"127.0.0.1", 0});
  }
  Config worker = PodConfig(1, 1);
  worker.peer_url = "http://127.0.0.1:" + std::to_string(free_port);
  IdBoard board;
  PeerPoller poller(worker, board);
  poller.Start();
  EXPECT_FALSE(poller.ready());
  EXPECT_EQ(AwaitAnswer(board, 1, std::chrono::milliseconds(300)).outcome,
            WaitOutcome::kTimeout);
  poller.Stop();
}

}  // namespace
}  // namespace sidecar
