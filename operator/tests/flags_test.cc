#include "flags.h"

#include <gtest/gtest.h>

namespace ncclop {
namespace {

TEST(Flags, Defaults) {
  auto f = ParseFlags({});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->sidecar_image, "nccl-sidecar:0.1.0");
  EXPECT_EQ(f->namespace_, "");
  EXPECT_FALSE(f->leader_elect);
  EXPECT_EQ(f->concurrency, 4);
  EXPECT_EQ(f->metrics_bind_address, ":8080");
}

TEST(Flags, BothSpellingsAndBooleanForms) {
  auto f = ParseFlags({"--namespace", "ml", "--kubeconfig=/k", "--leader-elect", "--concurrency=8",
                       "--log-format=json", "--log-level", "debug", "--metrics-bind-address=0"});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->namespace_, "ml");
  EXPECT_EQ(f->kubeconfig, "/k");
  EXPECT_TRUE(f->leader_elect);
  EXPECT_EQ(f->concurrency, 8);
  EXPECT_EQ(f->log_format, logging::Format::kJson);
  EXPECT_EQ(f->log_level, logging::Level::kDebug);
  EXPECT_EQ(f->metrics_bind_address, "0");
  EXPECT_FALSE(ParseFlags({"--leader-elect=false"})->leader_elect);
}

TEST(Flags, ErrorsSayWhatIsWrong) {
  EXPECT_NE(ParseFlags({"--concurrency=0"}).status().message().find("1 to 64"), std::string::npos);
  EXPECT_NE(ParseFlags({"--log-format=xml"}).status().message().find("text or json"), std::string::npos);
  EXPECT_NE(ParseFlags({"--bogus"}).status().message().find("unknown flag --bogus"), std::string::npos);
  EXPECT_NE(ParseFlags({"--namespace"}).status().message().find("needs a value"), std::string::npos);
}

TEST(Flags, HelpMentionsEveryFlag) {
  for (const char* flag : {"--kubeconfig", "--namespace", "--leader-elect", "--metrics-bind-address",
                           "--health-probe-bind-address", "--sidecar-image", "--log-format", "--log-level",
                           "--concurrency"}) {
    EXPECT_NE(HelpText().find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace ncclop
