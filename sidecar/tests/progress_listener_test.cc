// The listener on a real UDP socket on loopback: what a trainer sends lands on the board, what
// does not fit the contract is counted and dropped.
#include "progress_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "contract/names.h"

namespace sidecar {
namespace {

class ProgressListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    port_ = listener_.Bind({"127.0.0.1", 0}, &error);
    ASSERT_GT(port_, 0) << error;
    listener_.Start();
    sender_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(sender_, 0);
  }
  void TearDown() override {
    listener_.Stop();
    close(sender_);
  }

  void Send(const std::string& datagram) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port_));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(sendto(sender_, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)),
              static_cast<ssize_t>(datagram.size()));
  }

  template <class Condition>
  static bool WaitFor(Condition condition) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!condition()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  ProgressBoard board_;
  ProgressListener listener_{board_, /*world_size=*/4};
  int port_ = -1;
  int sender_ = -1;
};

TEST_F(ProgressListenerTest, PutsEachReportOnTheBoard) {
  Send(R"({"rank":1,"step":5,"total":10,"metrics":{"loss":2}})");
  ASSERT_TRUE(WaitFor([&] { return listener_.received() == 1; }));
  std::vector<RankProgress> ranks = board_.Ranks();
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].report.rank, 1);
  EXPECT_EQ(ranks[0].report.step, 5);
  EXPECT_EQ(ranks[0].report.total, 10);
}

TEST_F(ProgressListenerTest, DropsAndCountsWhatDoesNotFit) {
  Send("garbage");
  Send(R"({"rank":4,"step":1})");  // past the world size
  Send(R"({"rank":0,"step":1,"pad":")" + std::string(contract::kProgressReportMaxBytes * 2, 'x') + "\"}");
  Send(R"({"rank":0,"step":2})");
  ASSERT_TRUE(WaitFor([&] { return listener_.dropped() == 3 && listener_.received() == 1; }))
      << listener_.dropped() << " dropped, " << listener_.received() << " received";
  EXPECT_EQ(board_.Ranks().at(0).report.step, 2);
}

TEST_F(ProgressListenerTest, TakesABurst) {
  constexpr int kReports = 5000;
  for (int step = 1; step <= kReports; ++step) Send(R"({"rank":2,"step":)" + std::to_string(step) + "}");
  // UDP may drop some of a burst when the socket's buffer is full: the last report is sent again
  // until it lands, as a trainer's next report would.
  ASSERT_TRUE(WaitFor([&] {
    Send(R"({"rank":2,"step":)" + std::to_string(kReports) + "}");
    auto newest = board_.Newest();
    return newest && newest->report.step == kReports;
  })) << listener_.received() << " received";
  EXPECT_EQ(listener_.dropped(), 0u);
}

}  // namespace
}  // namespace sidecar
