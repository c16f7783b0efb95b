// operator/REFERENCE.md's metric table is made from the catalog (metrics/catalog.h), so a metric
// added, renamed or explained anew in code cannot leave the reference behind.
#include <gtest/gtest.h>

#include "cli/expect_generated_doc.h"
#include "metrics/catalog.h"

namespace ncclop::metrics {
namespace {

TEST(CatalogDoc, TheReferenceTableIsTheGeneratedOne) {
  cli::testing::ExpectGeneratedDoc(NCCLOP_OPERATOR_REFERENCE_MD, "metrics", MarkdownTable());
}

}  // namespace
}  // namespace ncclop::metrics
