// The real nccl-sidecar binary (standalone root) against clients that misbehave the way real
// ones do: long-polls given up on, idle keep-alive connections, slow senders, more connections
// than it keeps, a wrong method without a body. Whatever they do, /v1/info, the root's POST and
// the polls of the pod's trainers are answered at once (issue 11).
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "contract/unique_id.h"
#include "raw_http.h"
#include "sidecar_process.h"

namespace sidecar_it {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

Env RootEnv(int gpus_per_pod) {
  return {{"NCCLJOB_NAME", "local"}, {"NCCLJOB_INDEX", "0"}, {"NCCLJOB_REPLICAS", "2"},
          {"NCCLJOB_GPUS_PER_POD", std::to_string(gpus_per_pod)}, {"NCCLJOB_ATTEMPT", "1"},
          {"NCCLJOB_UID", "uid-local"}};
}

std::string LogPath(const std::string& name) {
  return std::string(::testing::TempDir()) + "/sidecar-connections-" + name + ".log";
}

std::string SomeId() {
  std::string id(128, '\0');
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(7 * i + 3);
  return id;
}

// One request on a fresh connection; status -1 when no answer came before the deadline.
int StatusOf(int port, const std::string& request, milliseconds within) {
  RawConnection c(port);
  if (!c.Send(request)) return -1;
  auto answer = c.Read(Clock::now() + within);
  return answer ? answer->status : -1;
}

class SidecarConnections : public ::testing::Test {
 protected:
  void StartRoot(const std::string& name, int gpus_per_pod = 1) {
    root_ = std::make_unique<SidecarProcess>(NCCL_SIDECAR_BIN, RootEnv(gpus_per_pod),
                                             std::vector<std::string>{"--standalone"}, LogPath(name));
    ASSERT_TRUE(root_->WaitStarted()) << root_->Log();
  }
  void TearDown() override {
    if (root_) {
      EXPECT_EQ(root_->Terminate(), 0) << root_->Log();
    }
  }
  int api() const { return root_->api_port(); }
  int probe() const { return root_->probe_port(); }

  std::unique_ptr<SidecarProcess> root_;
};

// Six clients gave up on a 60 s long-poll (curl -m1 does this); before, each held one of the
// five workers for the whole minute and /v1/info and the POST hung.
TEST_F(SidecarConnections, AbandonedLongPollsDoNotStallInfoOrThePost) {
  StartRoot("abandoned");
  for (int i = 0; i < 12; ++i) {
    RawConnection gone(api());
    ASSERT_TRUE(gone.Send(GetRequest("/v1/id?timeout=60")));
  }  // closed here, answer unread
  EXPECT_EQ(StatusOf(api(), GetRequest("/v1/info"), milliseconds(2000)), 200);
  EXPECT_EQ(StatusOf(api(), PostRequest("/v1/id", SomeId()), milliseconds(2000)), 200);
}

// Trainers that do wait all get the id, however many there are.
TEST_F(SidecarConnections, ManyWaitingPollsAllGetTheIdAndInfoStillAnswers) {
  StartRoot("waiting");
  std::vector<RawConnection> polls;
  for (int i = 0; i < 40; ++i) {
    polls.emplace_back(api());
    ASSERT_TRUE(polls.back().Send(GetRequest("/v1/id?timeout=60")));
  }
  EXPECT_EQ(StatusOf(api(), GetRequest("/v1/info"), milliseconds(2000)), 200);
  EXPECT_EQ(StatusOf(api(), PostRequest("/v1/id", SomeId()), milliseconds(2000)), 200);
  for (RawConnection& poll : polls) {
    auto answer = poll.Read(Clock::now() + seconds(5));
    ASSERT_TRUE(answer);
    ASSERT_EQ(answer->status, 200);
    EXPECT_EQ(json::parse(answer->body)["id"], contract::Base64Encode(SomeId()));
  }
}

// Before, ten idle connections delayed /v1/info by 18 s, and two kept the probes from the kubelet.
TEST_F(SidecarConnections, IdleConnectionsDelayNoRequestOnEitherPort) {
  StartRoot("idle");
  std::vector<RawConnection> idle;
  for (int i = 0; i < 20; ++i) {
    idle.emplace_back(api());
    idle.emplace_back(probe());
  }
  EXPECT_EQ(StatusOf(api(), GetRequest("/v1/info"), milliseconds(2000)), 200);
  EXPECT_EQ(StatusOf(probe(), GetRequest("/healthz"), milliseconds(2000)), 200);
  // The idle ones are closed after the idle timeout (5 s), not kept forever.
  for (RawConnection& c : idle) EXPECT_TRUE(c.ClosedByServer(Clock::now() + seconds(10)));
}

// A client that trickles a header line every 200 ms never finishes its request. Before, each
// such client held a worker for as long as it kept trickling.
TEST_F(SidecarConnections, SlowSendersGet408AndDoNotStallOthers) {
  StartRoot("slow");
  std::vector<RawConnection> slow;
  for (int i = 0; i < 8; ++i) {
    slow.emplace_back(i % 2 ? probe() : api());
    ASSERT_TRUE(slow.back().Send("GET /v1/info HTTP/1.1\r\nHost: x\r\n"));
  }
  auto started = Clock::now();
  std::atomic<bool> answered{false};
  std::thread trickle([&] {  // paces the slow clients; stops once they have their answers
    for (int round = 0; round < 60 && !answered; ++round) {
      for (RawConnection& c : slow) c.Send("X-Slow: " + std::to_string(round) + "\r\n");
      std::this_thread::sleep_for(milliseconds(200));
    }
  });
  EXPECT_EQ(StatusOf(api(), GetRequest("/v1/info"), milliseconds(2000)), 200);
  EXPECT_EQ(StatusOf(probe(), GetRequest("/readyz"), milliseconds(2000)), 200);
  for (RawConnection& c : slow) {
    auto answer = c.Read(started + seconds(10));
    ASSERT_TRUE(answer) << "a slow sender was never cut off";
    EXPECT_EQ(answer->status, 408);
  }
  EXPECT_LT(Clock::now() - started, seconds(10));
  answered = true;
  trickle.join();
}

// Before: 5 s of waiting for a body that was never announced, then 400.
TEST_F(SidecarConnections, WrongMethodWithoutABodyIs405AtOnce) {
  StartRoot("put");
  RawConnection c(api());
  ASSERT_TRUE(c.Send("PUT /v1/id HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto answer = c.Read(Clock::now() + milliseconds(1000));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 405);
  EXPECT_NE(answer->head.find("Allow: GET, POST"), std::string::npos) << answer->head;
  // The connection stays usable.
  ASSERT_TRUE(c.Send(GetRequest("/v1/info")));
  answer = c.Read(Clock::now() + milliseconds(1000));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
}

// 512 waiting polls fill the API's connections: one more is told 503 at once instead of
// hanging; the moment some pollers leave, requests are served again and the rest get the id.
TEST_F(SidecarConnections, OverTheConnectionLimitIs503AndLeftPollsFreeTheirPlace) {
  StartRoot("limit");
  std::vector<RawConnection> polls;
  for (int i = 0; i < 512; ++i) {
    polls.emplace_back(api());
    ASSERT_TRUE(polls.back().connected());
    ASSERT_TRUE(polls.back().Send(GetRequest("/v1/id?timeout=60")));
  }
  EXPECT_EQ(StatusOf(api(), GetRequest("/v1/info"), milliseconds(2000)), 503);
  polls.erase(polls.begin() + 400, polls.end());  // 112 clients give up
  int posted = -1;
  auto deadline = Clock::now() + seconds(5);
  while (posted != 200 && Clock::now() < deadline) {
    posted = StatusOf(api(), PostRequest("/v1/id", SomeId()), milliseconds(1000));
  }
  EXPECT_EQ(posted, 200);
  for (RawConnection& poll : polls) {
    auto answer = poll.Read(Clock::now() + seconds(5));
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 200);
  }
}

// The short form of the load check (bench/sidecarload times it): 200 abandoned and 200 idle
// connections, and the root's POST and 8 peers' polls still complete.
TEST_F(SidecarConnections, AbandonedAndIdleHundredsLeaveThePostAndPollsServed) {
  StartRoot("load", 8);
  std::vector<RawConnection> idle;
  for (int i = 0; i < 200; ++i) {
    RawConnection gone(api());
    ASSERT_TRUE(gone.Send(GetRequest("/v1/id?timeout=300")));
    idle.emplace_back(api());
  }
  std::vector<RawConnection> peers;
  for (int i = 0; i < 8; ++i) {
    peers.emplace_back(api());
    ASSERT_TRUE(peers.back().Send(GetRequest("/v1/id?timeout=30")));
  }
  EXPECT_EQ(StatusOf(api(), PostRequest("/v1/id", SomeId()), milliseconds(2000)), 200);
  for (RawConnection& peer : peers) {
    auto answer = peer.Read(Clock::now() + seconds(2));
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 200);
  }
}

}  // namespace
}  // namespace sidecar_it
