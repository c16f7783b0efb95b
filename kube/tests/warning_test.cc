#include "kube/warning.h"

#include <gtest/gtest.h>

namespace kube {
namespace {

using Texts = std::vector<std::string>;

TEST(WarningHeader, TheApiServersForm) {
  EXPECT_EQ(ParseWarningHeader(R"(299 - "spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use \"kubernetes.io/os\" instead")"),
            Texts{R"(spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead)"});
}

TEST(WarningHeader, SeveralInOneValueAndADate) {
  EXPECT_EQ(ParseWarningHeader(R"(299 - "one, with a comma", 299 kube-apiserver "two" "Sat, 25 Aug 2012 23:34:45 GMT")"),
            (Texts{"one, with a comma", "two"}));
}

TEST(WarningHeader, OnlyPersistentWarningsAndNoEmptyText) {
  EXPECT_EQ(ParseWarningHeader(R"(110 - "Response is Stale", 299 - "", 299 - "kept")"), Texts{"kept"});
}

TEST(WarningHeader, MalformedPartsEndTheParse) {
  EXPECT_EQ(ParseWarningHeader(""), Texts{});
  EXPECT_EQ(ParseWarningHeader("299 - unquoted"), Texts{});
  EXPECT_EQ(ParseWarningHeader(R"(299 - "never closed)"), Texts{});
  EXPECT_EQ(ParseWarningHeader(R"(29 - "short code")"), Texts{});
  EXPECT_EQ(ParseWarningHeader(R"(299 - "first" junk)"), Texts{});  // the date is not quoted: not one
  EXPECT_EQ(ParseWarningHeader(R"(299 - "first", nonsense)"), Texts{"first"});
}

}  // namespace
}  // namespace kube
