#include "cli/generated_block.h"

#include <gtest/gtest.h>

namespace cli {
namespace {

constexpr char kDoc[] =
    "# Title\n"
    "<!-- begin generated flags: from flags.cc -->\n"
    "| old |\n"
    "<!-- end generated flags -->\n"
    "after\n";

TEST(GeneratedBlock, IsTheTextBetweenTheMarkers) {
  EXPECT_EQ(GeneratedBlock(kDoc, "flags"), "| old |\n");
  EXPECT_FALSE(GeneratedBlock(kDoc, "flag")) << "a name is matched whole";
  EXPECT_FALSE(GeneratedBlock("<!-- begin generated flags -->\nno end\n", "flags"));
  EXPECT_FALSE(GeneratedBlock("no begin\n<!-- end generated flags -->\n", "flags"));
}

TEST(GeneratedBlock, ReplacingKeepsTheMarkersAndTheRest) {
  EXPECT_EQ(ReplaceGeneratedBlock(kDoc, "flags", "| new |\n| rows |\n"),
            "# Title\n"
            "<!-- begin generated flags: from flags.cc -->\n"
            "| new |\n| rows |\n"
            "<!-- end generated flags -->\n"
            "after\n");
  EXPECT_FALSE(ReplaceGeneratedBlock("# nothing\n", "flags", "x"));
}

}  // namespace
}  // namespace cli
