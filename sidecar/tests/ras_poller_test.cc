// The poller with the client replaced by scripted answers: what the stall watch gets from Poll.
#include "ras_poller.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "ras_fixtures.h"

namespace sidecar {
namespace {

using std::chrono::seconds;
const RasPoller::Clock::time_point kStart{};

RasAnswer Ok(const char* body) {
  RasAnswer answer;
  answer.kind = RasAnswer::Kind::kOk;
  answer.format = RasFormat::kJson;
  answer.body = body;
  return answer;
}

RasAnswer Kind(RasAnswer::Kind kind) {
  RasAnswer answer;
  answer.kind = kind;
  answer.error = "scripted";
  return answer;
}

// Hands out the answers in order, the last one again and again.
struct Script {
  std::mutex mu;
  std::deque<RasAnswer> answers;
  std::atomic<int> asked{0};
  RasPoller::Ask Ask() {
    return [this](const RasClientOptions&) {
      ++asked;
      std::lock_guard lock(mu);
      RasAnswer next = answers.front();
      if (answers.size() > 1) answers.pop_front();
      return next;
    };
  }
};

RasPollerOptions Options() {
  RasPollerOptions options;
  options.interval = seconds(30);
  options.timeout = seconds(60);
  options.client.deadline = std::chrono::milliseconds(12000);
  return options;
}

TEST(RasPoller, GivesTheWatchsReasonWithoutAskingNccl) {
  Script script;
  script.answers = {Ok(ras_fixtures::kDeadPeer2289)};
  RasPoller poller(Options(), script.Ask());
  poller.PollOnce(kStart);
  poller.PollOnce(kStart + seconds(30));
  EXPECT_FALSE(poller.Poll(kStart + seconds(31)));
  poller.PollOnce(kStart + seconds(60));
  std::optional<std::string> reason = poller.Poll(kStart + seconds(61));
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("is considered dead (unreachable via the RAS network)"), std::string::npos) << *reason;
  EXPECT_EQ(script.asked.load(), 3) << "Poll itself never asks";
}

TEST(RasPoller, FailedReadsKeepTheVerdictUntilItIsStale) {
  Script script;
  script.answers = {Ok(ras_fixtures::kDeadPeer2289), Ok(ras_fixtures::kDeadPeer2289),
                    Kind(RasAnswer::Kind::kFailed), Ok("not json")};
  RasPoller poller(Options(), script.Ask());
  poller.PollOnce(kStart);
  poller.PollOnce(kStart + seconds(60));
  poller.PollOnce(kStart + seconds(90));   // no answer in time
  poller.PollOnce(kStart + seconds(120));  // an answer not understood
  EXPECT_TRUE(poller.Poll(kStart + seconds(121)));
  // 3 intervals + the deadline after the last report, nothing backs the verdict any more.
  EXPECT_TRUE(poller.Poll(kStart + seconds(60 + 90 + 12)));
  EXPECT_FALSE(poller.Poll(kStart + seconds(60 + 90 + 13)));
}

TEST(RasPoller, NoNcclListeningClearsEverything) {
  Script script;
  script.answers = {Ok(ras_fixtures::kDeadPeer2289), Ok(ras_fixtures::kDeadPeer2289),
                    Kind(RasAnswer::Kind::kUnavailable)};
  RasPoller poller(Options(), script.Ask());
  poller.PollOnce(kStart);
  poller.PollOnce(kStart + seconds(60));
  EXPECT_TRUE(poller.Poll(kStart + seconds(61)));
  poller.PollOnce(kStart + seconds(90));
  EXPECT_FALSE(poller.Poll(kStart + seconds(91)));
}

TEST(RasPoller, ItsThreadAsksAtOnceAndStopsPromptly) {
  Script script;
  script.answers = {Kind(RasAnswer::Kind::kUnavailable)};
  RasPoller poller(Options(), script.Ask());
  poller.Start();
  auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (script.asked.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(script.asked.load(), 1);
  auto stopping = std::chrono::steady_clock::now();
  poller.Stop();  // mid-interval: the 30 s wait is cut short
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, seconds(1));
  EXPECT_EQ(script.asked.load(), 1);
}

}  // namespace
}  // namespace sidecar
