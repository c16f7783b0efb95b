#include "logging/log.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace logging {
namespace {

TEST(LogRender, TextQuotesValuesWithSpaces) {
  std::string line = Render(Format::kText, Level::kWarn, "T", "operator", "watch broke",
                            {{"job", "demo"}, {"error", "connection reset"}});
  EXPECT_EQ(line, "T warn operator: watch broke job=demo error=\"connection reset\"");
}

TEST(LogRender, JsonIsOneParsableObject) {
  std::string line = Render(Format::kJson, Level::kInfo, "T", "sidecar", "id served",
                            {{"attempt", "2"}});
  auto parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed["level"], "info");
  EXPECT_EQ(parsed["component"], "sidecar");
  EXPECT_EQ(parsed["attempt"], "2");
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(LogParse, RejectsUnknownNames) {
  Level level;
  Format format;
  EXPECT_TRUE(ParseLevel("debug", &level));
  EXPECT_EQ(level, Level::kDebug);
  EXPECT_FALSE(ParseLevel("verbose", &level));
  EXPECT_TRUE(ParseFormat("json", &format));
  EXPECT_FALSE(ParseFormat("yaml", &format));
}

}  // namespace
}  // namespace logging
