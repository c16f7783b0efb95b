#include "metrics/process.h"

#include <gtest/gtest.h>

#include <string>

namespace ncclop::metrics {
namespace {

TEST(ProcessStats, ParsesProcSelfStatWhoseNameHasSpacesAndParentheses) {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  // cutime cstime priority nice threads itrealvalue starttime vsize rss ...
  const std::string stat =
      "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 1000 123456789 300 18446744073709551615";
  ProcessStats s;
  ASSERT_TRUE(ParseProcStat(stat, 100, 4096, 1700000000, &s));
  EXPECT_DOUBLE_EQ(s.cpu_seconds, 3.0);
  EXPECT_DOUBLE_EQ(s.start_time_seconds, 1700000010.0);
  EXPECT_EQ(s.virtual_bytes, 123456789u);
  EXPECT_EQ(s.resident_bytes, 300u * 4096u);
  EXPECT_FALSE(ParseProcStat("garbage", 100, 4096, 0, &s));
}

TEST(ProcessStats, MaxOpenFilesAndBootTime) {
  EXPECT_EQ(ParseMaxOpenFiles("Limit Soft Limit Hard Limit Units\nMax open files            1024                 524288               files\n"),
            1024u);
  EXPECT_FALSE(ParseMaxOpenFiles("Max open files            unlimited            unlimited            files\n"));
  EXPECT_DOUBLE_EQ(ParseBootTime("cpu  1 2 3\nbtime 1700000000\nprocesses 5\n"), 1700000000.0);
}

}  // namespace
}  // namespace ncclop::metrics
