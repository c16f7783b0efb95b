#include "served_attempt.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace sidecar {
namespace {

TEST(ServedAttempt, TheStateFileHoldsOneAttempt) {
  EXPECT_EQ(ParseServedAttempt("4"), 4);
  EXPECT_EQ(ParseServedAttempt("4\n"), 4);
  for (const char* garbage : {"", "\n", "0", "-1", "4\n\n", " 4", "4 ", "four", "4x", "99999999999999999999"}) {
    EXPECT_FALSE(ParseServedAttempt(garbage)) << "'" << garbage << "'";
  }
}

TEST(ServedAttempt, AFirstStartServesTheAttemptThePodWasCreatedFor) {
  EXPECT_EQ(LastServedAttempt(std::nullopt, 3), 2);
  EXPECT_FALSE(DecideServedAttempt(std::nullopt, 3, 0).serve);  // the ConfigMap not listed yet
  EXPECT_FALSE(DecideServedAttempt(std::nullopt, 3, 2).serve);  // the operator has not moved it yet
  ServedAttemptDecision decision = DecideServedAttempt(std::nullopt, 3, 3);
  EXPECT_TRUE(decision.serve);
  EXPECT_EQ(decision.attempt, 3);
  EXPECT_TRUE(DecideServedAttempt(std::nullopt, 1, 1).serve);
}

TEST(ServedAttempt, AFirstStartAfterTheJobMovedOnEntersTheLaterAttemptThroughARestart) {
  // Made for 3, started only once the ConfigMap names 4: like every pod moved to 4, it restarts
  // once (so the operator's count of its restarts holds), recording 3 as served.
  ServedAttemptDecision first = DecideServedAttempt(std::nullopt, 3, 4);
  EXPECT_FALSE(first.serve);
  EXPECT_TRUE(first.restart);
  EXPECT_EQ(first.attempt, 3);
  ServedAttemptDecision restarted = DecideServedAttempt(3, 3, 4);
  EXPECT_TRUE(restarted.serve);
  EXPECT_FALSE(restarted.restart);
  EXPECT_EQ(restarted.attempt, 4);
  EXPECT_FALSE(DecideServedAttempt(std::nullopt, 3, 3).restart);
}

TEST(ServedAttempt, ARestartWaitsForTheNextAttemptAndNeverServesTheLastAgain) {
  // Restarted after serving 3 (its trainer failed): the ConfigMap still names 3 until the operator moves it.
  EXPECT_EQ(LastServedAttempt(3, 1), 3);
  EXPECT_FALSE(DecideServedAttempt(3, 1, 3).serve);
  EXPECT_FALSE(DecideServedAttempt(3, 1, 2).serve);
  ServedAttemptDecision next = DecideServedAttempt(3, 1, 4);
  EXPECT_TRUE(next.serve);
  EXPECT_EQ(next.attempt, 4);
  // A pod that missed attempts serves the one named now, not the one after its last.
  EXPECT_EQ(DecideServedAttempt(3, 1, 6).attempt, 6);
}

TEST(ServedAttempt, AFirstStartRecordsItsAttemptBeforeItServesIt) {
  EXPECT_EQ(AttemptEnteredAtStart(std::nullopt, 3), 3);
  EXPECT_EQ(AttemptEnteredAtStart(5, 3), std::nullopt);  // a later start: its file already says
  // Killed before it served 3 (the ConfigMap not listed yet), the pod restarts: the restart reads 3
  // and waits for the next attempt, as a restart after serving 3 does.
  const std::optional<int64_t> recorded = AttemptEnteredAtStart(std::nullopt, 3);
  EXPECT_FALSE(DecideServedAttempt(recorded, 3, 3).serve);
  EXPECT_FALSE(DecideServedAttempt(recorded, 3, 3).restart);
  EXPECT_EQ(DecideServedAttempt(recorded, 3, 4).attempt, 4);
  EXPECT_TRUE(DecideServedAttempt(recorded, 3, 4).serve);
}

TEST(ServedAttempt, OnlyALaterAttemptEndsTheServedOne) {
  EXPECT_FALSE(AttemptOver(4, 3));
  EXPECT_FALSE(AttemptOver(4, 4));
  EXPECT_TRUE(AttemptOver(4, 5));
}

class ServedAttemptFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "served-attempt-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    unlink((dir_ + "/attempt").c_str());
    unlink((dir_ + "/attempt.tmp").c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_;
};

TEST_F(ServedAttemptFileTest, NoFileIsAFirstStart) {
  ServedAttemptFile read = ReadServedAttempt(dir_);
  EXPECT_FALSE(read.attempt);
  EXPECT_EQ(read.problem, "");
  EXPECT_EQ(read.error, "");
}

TEST_F(ServedAttemptFileTest, WrittenThenReadBack) {
  ASSERT_EQ(WriteServedAttempt(dir_, 7), "");
  EXPECT_EQ(ReadServedAttempt(dir_).attempt, 7);
  ASSERT_EQ(WriteServedAttempt(dir_, 8), "");  // replaced whole, through attempt.tmp
  EXPECT_EQ(ReadServedAttempt(dir_).attempt, 8);
  EXPECT_NE(access((dir_ + "/attempt.tmp").c_str(), F_OK), 0) << "the temporary file is renamed, not left";
  std::ifstream in(dir_ + "/attempt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "8\n");
}

TEST_F(ServedAttemptFileTest, GarbageIsAProblemNotAnAttempt) {
  std::ofstream(dir_ + "/attempt") << "not a number";
  ServedAttemptFile read = ReadServedAttempt(dir_);
  EXPECT_FALSE(read.attempt);
  EXPECT_NE(read.problem.find("does not hold an attempt number"), std::string::npos) << read.problem;
  EXPECT_EQ(read.error, "");
}

TEST_F(ServedAttemptFileTest, AMissingDirectoryIsAnError) {
  ServedAttemptFile read = ReadServedAttempt(dir_ + "/absent");
  EXPECT_NE(read.error, "");
  EXPECT_NE(WriteServedAttempt(dir_ + "/absent", 1), "");
  std::ofstream(dir_ + "/attempt") << "1\n";
  EXPECT_NE(ReadServedAttempt(dir_ + "/attempt").error.find("is not a directory"), std::string::npos);
}

}  // namespace
}  // namespace sidecar
