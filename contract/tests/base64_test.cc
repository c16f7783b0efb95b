#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "contract/unique_id.h"

namespace contract {
namespace {

TEST(Base64, KnownVectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
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

TEST(Base64, RoundTripsEveryLength) {
  std::string data;
  for (int n = 0; n < 10; ++n) {
    auto back = Base64Decode(Base64Encode(data));
    ASSERT_TRUE(back.has_value()) << n;
    EXPECT_EQ(*back, data);
    data.push_back(static_cast<char>(250 - n));
  }
}

TEST(Base64, RefusesMalformedText) {
  EXPECT_FALSE(Base64Decode("Zm9"));        // not a multiple of 4
  EXPECT_FALSE(Base64Decode("Zm9v!A=="));   // outside the alphabet
  EXPECT_FALSE(Base64Decode("Zm=v"));       // padding in the middle of a group
  EXPECT_FALSE(Base64Decode("Zg==Zm9v"));   // padding before the end
  EXPECT_FALSE(Base64Decode("Zg==Zg=="));
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

TEST(UniqueId, OnlyExactly128BytesDecode) {
  const std::string id(kUniqueIdBytes, '\x5a');
  EXPECT_EQ(DecodeUniqueId(Base64Encode(id)), id);
  EXPECT_FALSE(DecodeUniqueId(Base64Encode(id.substr(1))));
  EXPECT_FALSE(DecodeUniqueId(Base64Encode(id + "x")));
  EXPECT_FALSE(DecodeUniqueId("not base64"));
}

}  // namespace
}  // namespace contract
