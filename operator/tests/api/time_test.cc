#include "api/time.h"

#include <gtest/gtest.h>

namespace ncclop::api {
namespace {

TEST(Time, FormatsAndParsesRfc3339) {
  auto t = ParseTime("2024-05-01T12:34:56Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(FormatTime(*t), "2024-05-01T12:34:56Z");
  auto offset = ParseTime("2024-05-01T14:34:56.123+02:00");
  ASSERT_TRUE(offset);
  EXPECT_EQ(*offset, *t);
  EXPECT_FALSE(ParseTime("yesterday"));
  EXPECT_FALSE(ParseTime("2024-05-01T12:34:56"));
}

}  // namespace
}  // namespace ncclop::api
