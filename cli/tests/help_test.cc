// --help and the docs' table, both made from the same rows.
#include <gtest/gtest.h>

#include "cli/program.h"
#include "contract/release_version.h"

namespace cli {
namespace {

struct Settings {
  std::string kubeconfig;
  std::string image = "side:1";
  bool elect = false;
  int workers = 4;
  std::string policy = "Always";
};

Program Table(Settings* s) {
  return {.name = "prog",
          .summary = "prog: does things.",
          .flags = {Text("kubeconfig", &s->kubeconfig, "PATH", "kubeconfig file").DefaultIs("in-cluster"),
                    Text("image", &s->image, "IMAGE", "the image"),
                    Switch("leader-elect", &s->elect, "hold a Lease"),
                    IntInRange("workers", &s->workers, 1, 64, "workers at once"),
                    OneOf("a-very-long-flag-name-for-the-policy", &s->policy, "P", {"Always", ""}, "a policy")},
          .epilogue = "SIGTERM: exit 0."};
}

TEST(HelpText, EveryFlagWithItsDefaultThenTheEpilogue) {
  Settings s;
  EXPECT_EQ(HelpText(Table(&s)),
            "prog: does things.\n"
            "\n"
            "Usage: prog [flags]\n"
            "\n"
            "Flags (--name=VALUE or --name VALUE; a switch also takes =true or =false):\n"
            "  --kubeconfig=PATH                 kubeconfig file (default: in-cluster)\n"
            "  --image=IMAGE                     the image (default side:1)\n"
            "  --leader-elect                    hold a Lease (default false)\n"
            "  --workers=N                       workers at once (a number from 1 to 64; default 4)\n"
            "  --a-very-long-flag-name-for-the-policy=P\n"
            "                                    a policy (Always or empty; default Always)\n"
            "  -h, --help                        this text\n"
            "  --version                         print the program's name and version, then exit\n"
            "\n"
            "SIGTERM: exit 0.\n");
}

TEST(HelpText, ShowsTheDefaultOfAFreshFieldNotAParsedOne) {
  Settings parsed;
  ASSERT_TRUE(Parse(Table(&parsed), {"--workers=9"}).ok());
  Settings fresh;
  EXPECT_NE(HelpText(Table(&fresh)).find("default 4)"), std::string::npos);
}

TEST(MarkdownTable, OneRowPerFlagWithPipesEscaped) {
  Settings s;
  Program program = Table(&s);
  program.flags.push_back(OneOf("format", &s.policy, "text|json", {"text", "json"}, "log format"));
  EXPECT_EQ(MarkdownTable(program),
            "| flag | default | meaning |\n"
            "| --- | --- | --- |\n"
            "| `--kubeconfig=PATH` | in-cluster | kubeconfig file |\n"
            "| `--image=IMAGE` | `side:1` | the image |\n"
            "| `--leader-elect` | `false` | hold a Lease |\n"
            "| `--workers=N` | `4` | workers at once (a number from 1 to 64) |\n"
            "| `--a-very-long-flag-name-for-the-policy=P` | `Always` | a policy (Always or empty) |\n"
            "| `--format=text\\|json` | `Always` | log format (text or json) |\n"
            "| `-h`, `--help` |  | this text |\n"
            "| `--version` |  | print the program's name and version, then exit |\n");
}

TEST(VersionText, TheNameAndTheReleaseVersionOnOneLine) {
  Settings s;
  EXPECT_EQ(VersionText(Table(&s)), "prog " + std::string(contract::kReleaseVersion) + "\n");
  EXPECT_FALSE(contract::kReleaseVersion.empty());
}

TEST(Wrap, BreaksBetweenWordsAndIndentsTheRest) {
  EXPECT_EQ(Wrap("aaa bbb ccc ddd", 10, 2), "aaa bbb\n  ccc ddd");
  EXPECT_EQ(Wrap("a verylongwordhere b", 8), "a\nverylongwordhere\nb");
  EXPECT_EQ(Wrap("one\ntwo three", 80, 4), "one\n    two three");
  EXPECT_EQ(Wrap("", 80), "");
}

}  // namespace
}  // namespace cli
