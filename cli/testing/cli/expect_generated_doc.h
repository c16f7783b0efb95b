// For tests: a document's generated block (cli/generated_block.h) must be what the code makes
// now. With NCCLOP_UPDATE_DOCS=1 in the environment the block is rewritten instead, so
//   NCCLOP_UPDATE_DOCS=1 ctest -R FlagsDoc
// brings the docs back in line after a flag changed.
#pragma once

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "cli/generated_block.h"

namespace cli::testing {

inline void ExpectGeneratedDoc(const std::string& path, const std::string& block, const std::string& expected) {
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream doc;
  doc << in.rdbuf();
  std::optional<std::string> committed = GeneratedBlock(doc.str(), block);
  ASSERT_TRUE(committed) << path << " has no '<!-- begin generated " << block << " ... -->' ... '<!-- end generated "
                         << block << " -->' block";
  if (*committed == expected) return;
  const char* update = std::getenv("NCCLOP_UPDATE_DOCS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << *ReplaceGeneratedBlock(doc.str(), block, expected);
    std::cerr << "rewrote the generated " << block << " block of " << path << "\n";
    return;
  }
  ADD_FAILURE() << "the generated " << block << " block of " << path
                << " differs from what the code makes; rewrite it with NCCLOP_UPDATE_DOCS=1 and this test.\n"
                << "In the file:\n" << *committed << "What the code makes:\n" << expected;
}

}  // namespace cli::testing
