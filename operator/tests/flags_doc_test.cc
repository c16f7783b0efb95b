// operator/REFERENCE.md's flag table is made from the flag rows (flags.cc), so a flag, default
// or meaning changed in code cannot leave the reference behind.
#include <gtest/gtest.h>

#include "cli/expect_generated_doc.h"
#include "flags.h"

namespace ncclop {
namespace {

TEST(FlagsDoc, TheReferenceTableIsTheGeneratedOne) {
  Flags defaults;
  cli::testing::ExpectGeneratedDoc(NCCLOP_OPERATOR_REFERENCE_MD, "flags", cli::MarkdownTable(CommandLine(&defaults)));
}

}  // namespace
}  // namespace ncclop
