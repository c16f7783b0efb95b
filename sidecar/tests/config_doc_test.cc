// sidecar/README.md's flag table is made from the flag rows (config.cc), so a flag, default or
// meaning changed in code cannot leave the README behind.
#include <gtest/gtest.h>

#include "cli/expect_generated_doc.h"
#include "config.h"

namespace sidecar {
namespace {

TEST(FlagsDoc, TheReadmeTableIsTheGeneratedOne) {
  Config defaults;
  cli::testing::ExpectGeneratedDoc(NCCLOP_SIDECAR_README_MD, "flags", cli::MarkdownTable(CommandLine(&defaults)));
}

}  // namespace
}  // namespace sidecar
