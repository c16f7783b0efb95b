// The id API's handlers against the real server on a free loopback port.
#include "api_server.h"

#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "contract/unique_id.h"
#include "fake_id_source.h"
#include "probe_server.h"

namespace sidecar {
namespace {

using nlohmann::json;

Config PodConfig(int index, int64_t attempt) {
  Config c;
  c.job = "demo";
  c.name_space = "team";
  c.job_uid = "uid-1";
  c.index = index;
  c.replicas = 2;
  c.gpus_per_pod = 2;
  c.world_size = 4;
  c.attempt = attempt;
  c.pod_name = "demo-" + std::to_string(index);
  c.listen = {"127.0.0.1", 0};
  return c;
}

// Waits for `condition` (checked every 5 ms) up to 10 s.
template <typename Condition>
bool WaitUntil(Condition condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// -1 when no answer came at all, so a failed request fails the check instead of crashing.
int StatusOf(const httplib::Result& result) { return result ? result->status : -1; }

std::string MakeId(char seed) {
  std::string id(128, '\0');
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(seed + i);
  return id;
}

// One sidecar's API server on a free port, serving on its own thread, over a fake id source.
class RunningApi {
 public:
  // keep_now: the source keeps an id as soon as it is handed over; else only after Keep().
  explicit RunningApi(Config config, bool keep_now = true,
                      std::chrono::milliseconds keep_wait = ApiServer::kKeepWait)
      : config_(std::move(config)) {
    source_.KeepAtOnce(keep_now);
    server_ = std::make_unique<ApiServer>(config_, board_, source_, keep_wait);
    port_ = server_->Bind(config_.listen);
    server_->Start();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(std::chrono::seconds(20));
  }
  ~RunningApi() {
    board_.Close();
    server_->Stop();
  }
  IdBoard& board() { return board_; }
  int waiting() const { return server_->waiting(); }
  httplib::Client& client() { return *client_; }
  int port() const { return port_; }
  // The ids the server handed to the source to keep.
  std::vector<std::pair<int64_t, std::string>> sunk() const { return source_.handed(); }
  // What the source recalls (as RootReporter from the pod it read at start).
  void Recall(RecalledId recalled) { source_.SetRecalled(std::move(recalled)); }
  // The source has kept this id (as RootReporter once the annotation is on the pod); it wakes the server.
  void Keep(int64_t attempt, const std::string& id) { source_.MarkKept(attempt, id); }

 private:
  Config config_;
  IdBoard board_;
  FakeIdSource source_;
  std::unique_ptr<ApiServer> server_;
  int port_ = -1;
  std::unique_ptr<httplib::Client> client_;
};

TEST(ApiServer, BindsAFreePort) {
  RunningApi api(PodConfig(0, 1));
  EXPECT_GT(api.port(), 0);
}

TEST(ApiServer, InfoDescribesThePod) {
  RunningApi api(PodConfig(1, 3));
  auto res = api.client().Get("/v1/info");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json info = json::parse(res->body);
  EXPECT_EQ(info, (json{{"job", "demo"}, {"namespace", "team"}, {"index", 1}, {"replicas", 2}, {"worldSize", 4},
                        {"gpusPerPod", 2}, {"attempt", 3}, {"root", false}, {"bootstrapRoots", 1}}));
}

TEST(ApiServer, RootAcceptsRawIdOnceAndRepeatsAreHarmless) {
  RunningApi api(PodConfig(0, 2));
  auto res = api.client().Post("/v1/id", MakeId('a'), "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body), (json{{"attempt", 2}}));
  res = api.client().Post("/v1/id", MakeId('a'), "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  auto sunk = api.sunk();
  ASSERT_EQ(sunk.size(), 1u);  // reported once
  EXPECT_EQ(sunk[0].first, 2);
  EXPECT_EQ(sunk[0].second, MakeId('a'));
}

TEST(ApiServer, RootAcceptsTheJsonForm) {
  RunningApi api(PodConfig(0, 2));
  json body = {{"id", contract::Base64Encode(MakeId('j'))}, {"attempt", 2}};
  auto res = api.client().Post("/v1/id", body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  ASSERT_EQ(api.sunk().size(), 1u);
  EXPECT_EQ(api.sunk()[0].second, MakeId('j'));
}

TEST(ApiServer, RootRefusesASecondDifferentIdWith409) {
  RunningApi api(PodConfig(0, 1));
  ASSERT_EQ(StatusOf(api.client().Post("/v1/id", MakeId('a'), "application/octet-stream")), 200);
  auto res = api.client().Post("/v1/id", MakeId('b'), "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
  EXPECT_EQ(api.sunk().size(), 1u);
}

// A restarted root sidecar holds the id its pod already carries for the attempt: the same id is
// answered 200 at once (nothing to keep again), another one 409. A POST waits for the pod to be
// read (up to the keep wait, then 503).
TEST(ApiServer, ARestartedRootHoldsTheIdItsPodCarries) {
  {
    RunningApi unread(PodConfig(0, 3), /*keep_now=*/false, std::chrono::milliseconds(300));
    unread.Recall(RecalledId{false, std::nullopt});
    auto early = unread.client().Post("/v1/id", MakeId('a'), "application/octet-stream");
    ASSERT_TRUE(early);
    EXPECT_EQ(early->status, 503) << "the pod was never read";
    EXPECT_NE(early->body.find("POST the same id again"), std::string::npos) << early->body;
    EXPECT_TRUE(unread.sunk().empty()) << "nothing accepted before the pod is read";
  }
  RunningApi api(PodConfig(0, 3), /*keep_now=*/false);
  api.Recall(RecalledId{false, std::nullopt});
  auto waiting = std::async(std::launch::async, [&] { return api.client().Post("/v1/id", MakeId('a'), "application/octet-stream"); });
  ASSERT_TRUE(WaitUntil([&] { return api.waiting() == 1; })) << "the POST waits for the pod to be read";
  api.Recall(RecalledId{true, MakeId('k')});
  api.Keep(3, MakeId('k'));  // the pod carries it (and Keep wakes the waiting POST)
  auto other = waiting.get();
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 409);
  EXPECT_NE(other->body.find("a different id was already accepted for attempt 3"), std::string::npos) << other->body;
  auto same = api.client().Post("/v1/id", MakeId('k'), "application/octet-stream");
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 200);
  EXPECT_TRUE(api.sunk().empty()) << "the id on the pod is not reported again";
}

// The root gap (tests/chaos, root-sidecar): a sidecar that answered 200 and was then killed
// before the id was on its pod lost the id, and the attempt waited out its init timeout. The
// POST is now answered only once the keeper holds the id; until then a kill fails the POST and
// the trainer posts the same id to the restarted sidecar.
TEST(ApiServer, RootAnswersThePostOnlyOnceTheIdIsKept) {
  RunningApi api(PodConfig(0, 3), /*keep_now=*/false);
  auto posted = std::async(std::launch::async, [&] {
    return StatusOf(api.client().Post("/v1/id", MakeId('k'), "application/octet-stream"));
  });
  // Handed to the keeper at once, but not answered while it is not kept.
  ASSERT_TRUE(WaitUntil([&] { return api.sunk().size() == 1; }));
  ASSERT_TRUE(WaitUntil([&] { return api.waiting() == 1; }));
  EXPECT_EQ(posted.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  api.Keep(3, MakeId('k'));
  EXPECT_EQ(posted.get(), 200);
  // Kept: the same id again is answered at once and not handed over twice.
  EXPECT_EQ(StatusOf(api.client().Post("/v1/id", MakeId('k'), "application/octet-stream")), 200);
  EXPECT_EQ(api.sunk().size(), 1u);
}

TEST(ApiServer, RootAnswers503WhenTheIdIsNotKeptInTimeAndTheSameIdAgainWaitsAgain) {
  RunningApi api(PodConfig(0, 1), /*keep_now=*/false, std::chrono::milliseconds(200));
  auto res = api.client().Post("/v1/id", MakeId('s'), "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(json::parse(res->body).value("error", "").find("POST the same id again"), std::string::npos) << res->body;
  // The retry (the trainer's client retries 5xx) is the same id: not a conflict, kept by now.
  api.Keep(1, MakeId('s'));
  EXPECT_EQ(StatusOf(api.client().Post("/v1/id", MakeId('s'), "application/octet-stream")), 200);
  EXPECT_EQ(StatusOf(api.client().Post("/v1/id", MakeId('t'), "application/octet-stream")), 409);
  EXPECT_EQ(api.sunk().size(), 1u);
}

TEST(ApiServer, PostRefusals) {
  RunningApi api(PodConfig(0, 1));
  auto res = api.client().Post("/v1/id", std::string(127, 'x'), "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_TRUE(json::parse(res->body).contains("error"));
  res = api.client().Post("/v1/id", "{not json", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  res = api.client().Post("/v1/id", json{{"id", contract::Base64Encode(MakeId('a'))}, {"attempt", 2}}.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 409);
  res = api.client().Post("/v1/id", std::string(5000, 'x'), "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_TRUE(api.sunk().empty());
}

TEST(ApiServer, NonRootRefusesPostWith403) {
  RunningApi api(PodConfig(1, 1));
  auto res = api.client().Post("/v1/id", MakeId('a'), "application/octet-stream");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
}

TEST(ApiServer, OtherMethodsAre405AndUnknownPaths404) {
  RunningApi api(PodConfig(0, 1));
  auto res = api.client().Put("/v1/id", "x", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "GET, POST");
  res = api.client().Delete("/v1/id");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  res = api.client().Post("/v1/info", "x", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  res = api.client().Get("/v2/id");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

TEST(ApiServer, GetServesThePublishedIdOfThisAttempt) {
  RunningApi api(PodConfig(1, 2));
  api.board().Observe(2, MakeId('z'), "uid-from-configmap");
  auto res = api.client().Get("/v1/id?timeout=5");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json body = json::parse(res->body);
  EXPECT_EQ(body, (json{{"id", contract::Base64Encode(MakeId('z'))}, {"ids", {contract::Base64Encode(MakeId('z'))}}, {"attempt", 2},
                        {"job", "demo"}, {"jobUID", "uid-from-configmap"}}));
}

TEST(ApiServer, GetServesTheListOfSeveralRootsWithoutASingleId) {
  Config config = PodConfig(1, 2);
  config.bootstrap_roots = 2;
  RunningApi api(config);
  api.board().Observe(2, MakeId('a') + MakeId('b'), "u");
  auto res = api.client().Get("/v1/id?timeout=5");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json body = json::parse(res->body);
  EXPECT_EQ(body["ids"], (json{contract::Base64Encode(MakeId('a')), contract::Base64Encode(MakeId('b'))}));
  // No "id": a client that reads one id must fail, not join with the first root's alone.
  EXPECT_FALSE(body.contains("id"));
}

TEST(ApiServer, EveryRootPodAcceptsItsTrainersIdAndOthersRefuse) {
  // 4 pods, 2 roots: pods 0 and 2 make an id.
  for (int index = 0; index < 4; ++index) {
    Config config = PodConfig(index, 1);
    config.replicas = 4;
    config.gpus_per_pod = 1;
    config.world_size = 4;
    config.bootstrap_roots = 2;
    RunningApi api(config);
    auto res = api.client().Post("/v1/id", MakeId('r'), "application/octet-stream");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, index % 2 == 0 ? 200 : 403) << "pod " << index;
    if (res->status == 403) {
      EXPECT_NE(res->body.find("bootstrap root pods"), std::string::npos) << res->body;
    }
    EXPECT_EQ(api.sunk().size(), index % 2 == 0 ? 1u : 0u);
  }
}

TEST(ApiServer, GetLongPollsUntilTheIdArrives) {
  RunningApi api(PodConfig(1, 1));
  auto pending = std::async(std::launch::async, [&] { return api.client().Get("/v1/id?timeout=20"); });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (api.waiting() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(api.waiting(), 1);
  api.board().Observe(1, MakeId('w'));
  auto res = pending.get();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["id"], contract::Base64Encode(MakeId('w')));
}

TEST(ApiServer, GetTimesOutWith204AndNeverServesAnotherAttempt) {
  RunningApi api(PodConfig(1, 2));
  api.board().Observe(1, MakeId('o'));  // an older attempt's id
  auto res = api.client().Get("/v1/id?timeout=0");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  EXPECT_TRUE(res->body.empty());
}

TEST(ApiServer, GetIs410WhenALaterAttemptExists) {
  RunningApi api(PodConfig(1, 1));
  api.board().Observe(1, MakeId('1'));
  api.board().Observe(2, MakeId('2'));
  auto res = api.client().Get("/v1/id?timeout=5");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 410);
  EXPECT_EQ(res->body.find(contract::Base64Encode(MakeId('2'))), std::string::npos);
}

TEST(ApiServer, GetRefusesABadTimeout) {
  RunningApi api(PodConfig(1, 1));
  auto res = api.client().Get("/v1/id?timeout=soon");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
}

TEST(ApiServer, EveryLocalTrainerCanLongPollAtOnceAndInfoStillAnswers) {
  RunningApi api(PodConfig(1, 1));  // gpusPerPod 2
  std::vector<std::future<httplib::Result>> polls;
  std::vector<std::unique_ptr<httplib::Client>> clients;
  for (int i = 0; i < 2; ++i) {
    clients.push_back(std::make_unique<httplib::Client>("127.0.0.1", api.port()));
    clients.back()->set_read_timeout(std::chrono::seconds(20));
    polls.push_back(std::async(std::launch::async, [c = clients.back().get()] { return c->Get("/v1/id?timeout=20"); }));
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (api.waiting() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(api.waiting(), 2);
  auto info = api.client().Get("/v1/info");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, 200);
  api.board().Observe(1, MakeId('m'));
  for (auto& p : polls) {
    auto res = p.get();
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  }
}

TEST(ApiServer, ShutdownAnswersWaitingPollsWith503) {
  RunningApi api(PodConfig(1, 1));
  auto pending = std::async(std::launch::async, [&] { return api.client().Get("/v1/id?timeout=20"); });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (api.waiting() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  api.board().Close();
  auto res = pending.get();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
}

TEST(ProbeServer, HealthzAlwaysReadyzFollowsTheSource) {
  FakeIdSource source;
  source.SetReady(false);
  ProbeServer probe(source);
  int port = probe.Bind({"127.0.0.1", 0});
  ASSERT_GT(port, 0);
  probe.Start();
  httplib::Client client("127.0.0.1", port);
  EXPECT_EQ(StatusOf(client.Get("/healthz")), 200);
  EXPECT_EQ(StatusOf(client.Get("/readyz")), 503);
  source.SetReady(true);
  EXPECT_EQ(StatusOf(client.Get("/readyz")), 200);
  EXPECT_EQ(StatusOf(client.Post("/readyz", "", "text/plain")), 405);
  EXPECT_EQ(StatusOf(client.Get("/v1/id")), 404);  // the id never leaves loopback through this port
  probe.Stop();
}

}  // namespace
}  // namespace sidecar
