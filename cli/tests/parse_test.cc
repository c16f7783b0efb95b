// The parser every program shares: spellings, switches, help, and errors that name the flag,
// what it takes and what it got, and point to --help.
#include <gtest/gtest.h>

#include "cli/program.h"

namespace cli {
namespace {

struct Settings {
  std::string name_space;
  bool elect = false;
  int workers = 4;
};

Program Table(Settings* s) {
  return {.name = "prog",
          .summary = "prog: does things.",
          .flags = {Text("namespace", &s->name_space, "NS", "watch one namespace").DefaultIs("all namespaces"),
                    Switch("leader-elect", &s->elect, "hold a Lease"),
                    IntInRange("workers", &s->workers, 1, 64, "workers")},
          .epilogue = ""};
}

ParseOutcome ParseInto(Settings* s, const std::vector<std::string>& args) { return Parse(Table(s), args); }

TEST(Parse, NothingLeavesTheDefaults) {
  Settings s;
  EXPECT_TRUE(ParseInto(&s, {}).ok());
  EXPECT_FALSE(ParseInto(&s, {}).help);
  EXPECT_EQ(s.workers, 4);
  EXPECT_FALSE(s.elect);
}

TEST(Parse, BothSpellingsAndTheLastRepeatWins) {
  Settings s;
  ASSERT_TRUE(ParseInto(&s, {"--namespace", "ml", "--workers=8", "--workers", "9", "--namespace=a=b"}).ok());
  EXPECT_EQ(s.name_space, "a=b");
  EXPECT_EQ(s.workers, 9);
  ASSERT_TRUE(ParseInto(&s, {"--namespace="}).ok());
  EXPECT_EQ(s.name_space, "") << "an empty inline value is a value";
}

TEST(Parse, SwitchesAloneOrWithTrueOrFalse) {
  Settings s;
  ASSERT_TRUE(ParseInto(&s, {"--leader-elect"}).ok());
  EXPECT_TRUE(s.elect);
  ASSERT_TRUE(ParseInto(&s, {"--leader-elect=false"}).ok());
  EXPECT_FALSE(s.elect);
  ASSERT_TRUE(ParseInto(&s, {"--leader-elect=true", "--workers", "2"}).ok());
  EXPECT_TRUE(s.elect);
  EXPECT_EQ(s.workers, 2) << "a switch does not take the next argument";
  EXPECT_EQ(ParseInto(&s, {"--leader-elect=yes"}).error,
            "--leader-elect must be true or false, got \"yes\" (see prog --help)");
}

TEST(Parse, HelpStopsParsing) {
  Settings s;
  EXPECT_TRUE(ParseInto(&s, {"-h"}).help);
  ParseOutcome help_first = ParseInto(&s, {"--help", "--bogus"});
  EXPECT_TRUE(help_first.help);
  EXPECT_TRUE(help_first.ok());
  ParseOutcome error_first = ParseInto(&s, {"--bogus", "--help"});
  EXPECT_FALSE(error_first.help);
  EXPECT_FALSE(error_first.ok());
}

TEST(Parse, VersionStopsParsing) {
  Settings s;
  ParseOutcome version = ParseInto(&s, {"--version", "--bogus"});
  EXPECT_TRUE(version.version);
  EXPECT_FALSE(version.help);
  EXPECT_TRUE(version.ok());
  EXPECT_FALSE(ParseInto(&s, {}).version);
  EXPECT_TRUE(ParseInto(&s, {"--help", "--version"}).help) << "the first of the two wins";
  EXPECT_FALSE(ParseInto(&s, {"--bogus", "--version"}).ok());
  EXPECT_EQ(ParseInto(&s, {"--version=1"}).error, "unknown flag --version (see prog --help)");
}

TEST(Parse, ErrorsNameTheFlagWhatItTakesAndWhatItGot) {
  Settings s;
  EXPECT_EQ(ParseInto(&s, {"--workers=0"}).error, "--workers must be a number from 1 to 64, got \"0\" (see prog --help)");
  EXPECT_EQ(ParseInto(&s, {"--bogus=1"}).error, "unknown flag --bogus (see prog --help)");
  EXPECT_EQ(ParseInto(&s, {"--help=1"}).error, "unknown flag --help (see prog --help)");
  EXPECT_EQ(ParseInto(&s, {"--workers"}).error, "--workers needs a value: a number from 1 to 64 (see prog --help)");
  EXPECT_EQ(ParseInto(&s, {"--namespace"}).error, "--namespace needs a value: NS (see prog --help)");
  EXPECT_EQ(ParseInto(&s, {"ml"}).error, "unexpected argument \"ml\" (see prog --help)");
  EXPECT_EQ(ParseInto(&s, {"-n", "ml"}).error, "unexpected argument \"-n\" (see prog --help)");
  EXPECT_EQ(ParseInto(&s, {"--"}).error, "unknown flag -- (see prog --help)");
}

TEST(Parse, AValueMayLookLikeAFlag) {
  Settings s;
  ASSERT_TRUE(ParseInto(&s, {"--namespace", "--leader-elect"}).ok());
  EXPECT_EQ(s.name_space, "--leader-elect");
  EXPECT_FALSE(s.elect);
}

}  // namespace
}  // namespace cli
