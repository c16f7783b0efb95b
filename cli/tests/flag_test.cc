// Each kind of flag: what it stores, what it refuses (leaving the field as it was), and the
// default it shows, read from the field before parsing.
#include "cli/flag.h"

#include <gtest/gtest.h>

#include "cli/log_flags.h"

namespace cli {
namespace {

TEST(Flag, TextTakesAnythingAndShowsTheFieldsDefault) {
  std::string field = "nccl-operator-leader";
  Flag flag = Text("leader-election-id", &field, "NAME", "the Lease's name");
  EXPECT_EQ(flag.default_shown, "nccl-operator-leader");
  EXPECT_TRUE(flag.default_is_literal);
  EXPECT_TRUE(flag.set(""));
  EXPECT_EQ(field, "");
  EXPECT_TRUE(flag.set("x=y"));
  EXPECT_EQ(field, "x=y");
}

TEST(Flag, DefaultIsDescribesWhereAnEmptyDefaultComesFrom) {
  std::string field;
  Flag flag = Text("namespace", &field, "NS", "watch one namespace").DefaultIs("all namespaces");
  EXPECT_EQ(flag.default_shown, "all namespaces");
  EXPECT_FALSE(flag.default_is_literal);
  EXPECT_TRUE(flag.set("ml"));
  EXPECT_EQ(field, "ml");
}

TEST(Flag, CheckRefusesWithoutStoring) {
  std::string field = "nccl-sidecar:0.1.0";
  Flag flag = Text("sidecar-image", &field, "IMAGE", "image").Check("a non-empty image name",
                                                                      [](const std::string& v) { return !v.empty(); });
  EXPECT_EQ(flag.takes, "a non-empty image name");
  EXPECT_FALSE(flag.set(""));
  EXPECT_EQ(field, "nccl-sidecar:0.1.0");
  EXPECT_TRUE(flag.set("r/side:2"));
  EXPECT_EQ(field, "r/side:2");
}

TEST(Flag, SwitchTakesTrueOrFalseOnly) {
  bool field = false;
  Flag flag = Switch("leader-elect", &field, "hold a Lease");
  EXPECT_TRUE(flag.is_switch);
  EXPECT_EQ(flag.default_shown, "false");
  EXPECT_TRUE(flag.set("true"));
  EXPECT_TRUE(field);
  EXPECT_FALSE(flag.set("yes"));
  EXPECT_TRUE(field);
  EXPECT_TRUE(flag.set("false"));
  EXPECT_FALSE(field);
}

TEST(Flag, IntInRangeRefusesOutsideAndNonNumbers) {
  int field = 4;
  Flag flag = IntInRange("concurrency", &field, 1, 64, "jobs at once");
  EXPECT_EQ(flag.takes, "a number from 1 to 64");
  EXPECT_EQ(flag.default_shown, "4");
  for (const char* bad : {"0", "65", "", "8x", " 8", "-1", "1e1", "99999999999"}) {
    EXPECT_FALSE(flag.set(bad)) << bad;
  }
  EXPECT_EQ(field, 4);
  EXPECT_TRUE(flag.set("64"));
  EXPECT_EQ(field, 64);
}

TEST(Flag, OneOfListsItsChoicesWithEmptyNamed) {
  std::string field = "Always";
  Flag flag = OneOf("pull", &field, "P", {"Always", "IfNotPresent", "Never", ""}, "policy");
  EXPECT_EQ(flag.takes, "Always, IfNotPresent, Never or empty");
  EXPECT_FALSE(flag.set("always"));
  EXPECT_TRUE(flag.set(""));
  EXPECT_EQ(field, "");
  EXPECT_EQ(ListChoices({"text", "json"}), "text or json");
  EXPECT_EQ(ListChoices({"one"}), "one");
}

TEST(Flag, ParsedUsesItsParserAndShowsTheDefault) {
  std::vector<int> field = {1, 2};
  Flag flag = Parsed<std::vector<int>>(
      "ids", &field, "N,N", "digits separated by commas",
      [](const std::string& text) -> std::optional<std::vector<int>> {
        std::vector<int> out;
        for (char c : text) {
          if (c >= '0' && c <= '9') out.push_back(c - '0');
          else if (c != ',') return std::nullopt;
        }
        return out;
      },
      [](const std::vector<int>& v) {
        std::string s;
        for (int i : v) s += (s.empty() ? "" : ",") + std::to_string(i);
        return s;
      },
      "some ids");
  EXPECT_EQ(flag.default_shown, "1,2");
  EXPECT_FALSE(flag.set("1,x"));
  EXPECT_EQ(field, (std::vector<int>{1, 2}));
  EXPECT_TRUE(flag.set("3,4,5"));
  EXPECT_EQ(field, (std::vector<int>{3, 4, 5}));
}

TEST(Flag, LogFlagsShowTheirDefaultByNameAndAcceptWhatLoggingAccepts) {
  logging::Level level = logging::Level::kInfo;
  logging::Format format = logging::Format::kText;
  Flag level_flag = LogLevelFlag(&level);
  Flag format_flag = LogFormatFlag(&format);
  EXPECT_EQ(level_flag.default_shown, "info");
  EXPECT_EQ(format_flag.default_shown, "text");
  EXPECT_EQ(level_flag.takes, "debug, info, warn or error");
  EXPECT_EQ(format_flag.takes, "text or json");
  EXPECT_TRUE(level_flag.set("warning"));
  EXPECT_EQ(level, logging::Level::kWarn);
  EXPECT_FALSE(format_flag.set("xml"));
  EXPECT_TRUE(format_flag.set("json"));
  EXPECT_EQ(format, logging::Format::kJson);
}

}  // namespace
}  // namespace cli
