#include "base64.h"

#include <string>

#include <gtest/gtest.h>

namespace sidecar {
namespace {

TEST(Base64, KnownVectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(Base64Decode("Zg=="), "f");
}

TEST(Base64, RoundTripsEveryByteValue) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  for (size_t len = 0; len <= bytes.size(); len += 37) {
    std::string part = bytes.substr(0, len);
    EXPECT_EQ(Base64Decode(Base64Encode(part)), part) << len;
  }
  EXPECT_EQ(Base64Encode(std::string(128, '\xff')).size(), 172u);
}

TEST(Base64, RefusesMalformedText) {
  EXPECT_FALSE(Base64Decode("Zm9"));        // not a multiple of 4
  EXPECT_FALSE(Base64Decode("Zm9v!A=="));   // outside the alphabet
  EXPECT_FALSE(Base64Decode("Zm=v"));       // padding in the middle of a group
  EXPECT_FALSE(Base64Decode("Zg==Zm9v"));   // padding before the end
  EXPECT_FALSE(Base64Decode("Zm9v\n"));
}

// fuzz/base64's property (regression input regression-nonzero-padding-bits): "Zh==" and "Zm8="
// decoded to the same bytes as "Zg==" and "Zm8=", so one id had several texts.
TEST(Base64, RefusesNonZeroBitsUnderThePadding) {
  EXPECT_EQ(Base64Decode("Zg=="), std::optional<std::string>("f"));
  EXPECT_FALSE(Base64Decode("Zh=="));
  EXPECT_FALSE(Base64Decode("Zv=="));
  EXPECT_EQ(Base64Decode("Zm8="), std::optional<std::string>("fo"));
  EXPECT_FALSE(Base64Decode("Zm9="));
}

}  // namespace
}  // namespace sidecar
