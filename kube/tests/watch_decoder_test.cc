#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kube/watch.h"

namespace kube {
namespace {

const char* kStream =
    R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","namespace":"ns","resourceVersion":"10"}}})"
    "\n"
    R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"a","namespace":"ns","resourceVersion":"11"},"data":"caf\u00e9 \n x"}})"
    "\r\n"
    "\n"
    R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}})"
    "\n"
    R"({"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a","namespace":"ns","resourceVersion":"13"}}})"
    "\n"
    R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 [5]","reason":"Expired","code":410}})"
    "\n";

struct Seen {
  std::vector<std::string> types;
  std::vector<std::string> versions;
  int errors = 0;
};

WatchDecoder::Sink Collect(Seen* seen) {
  return [seen](Result<WatchEvent>&& e) {
    if (!e.ok()) {
      ++seen->errors;
      return;
    }
    seen->types.push_back(EventTypeName(e->type));
    seen->versions.push_back(e->ResourceVersion());
  };
}

TEST(WatchDecoderTest, DecodesAWholeStreamInOneChunk) {
  Seen seen;
  WatchDecoder d;
  d.Feed(kStream, Collect(&seen));
  EXPECT_EQ(seen.types, (std::vector<std::string>{"ADDED", "MODIFIED", "BOOKMARK", "DELETED", "ERROR"}));
  EXPECT_EQ(seen.versions, (std::vector<std::string>{"10", "11", "12", "13", ""}));
  EXPECT_EQ(seen.errors, 0);
  EXPECT_EQ(d.buffered(), 0u);
}

TEST(WatchDecoderTest, SameEventsWhenSplitAtEveryBytePosition) {
  const std::string stream = kStream;
  Seen whole;
  WatchDecoder(WatchDecoder::kDefaultMaxLineBytes).Feed(stream, Collect(&whole));
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    Seen seen;
    WatchDecoder d;
    d.Feed(std::string_view(stream).substr(0, cut), Collect(&seen));
    d.Feed(std::string_view(stream).substr(cut), Collect(&seen));
    ASSERT_EQ(seen.types, whole.types) << "cut at " << cut;
    ASSERT_EQ(seen.versions, whole.versions) << "cut at " << cut;
    ASSERT_EQ(seen.errors, 0) << "cut at " << cut;
  }
}

TEST(WatchDecoderTest, SameEventsWhenFedOneByteAtATime) {
  const std::string stream = kStream;
  Seen seen;
  WatchDecoder d;
  for (char c : stream) d.Feed(std::string_view(&c, 1), Collect(&seen));
  EXPECT_EQ(seen.types.size(), 5u);
  EXPECT_EQ(seen.errors, 0);
}

TEST(WatchDecoderTest, SameEventsForEveryPairOfCuts) {
  const std::string stream = kStream;
  const std::size_t n = stream.size();
  for (std::size_t a = 0; a <= n; a += 7) {
    for (std::size_t b = a; b <= n; b += 5) {
      Seen seen;
      WatchDecoder d;
      d.Feed(std::string_view(stream).substr(0, a), Collect(&seen));
      d.Feed(std::string_view(stream).substr(a, b - a), Collect(&seen));
      d.Feed(std::string_view(stream).substr(b), Collect(&seen));
      ASSERT_EQ(seen.types.size(), 5u) << a << "," << b;
    }
  }
}

TEST(WatchDecoderTest, BadLineIsReportedAndTheNextLineStillDecodes) {
  Seen seen;
  WatchDecoder d;
  d.Feed("{not json}\n{\"type\":\"WHAT\",\"object\":{}}\n{\"type\":\"ADDED\"}\n", Collect(&seen));
  d.Feed(R"({"type":"ADDED","object":{"metadata":{"resourceVersion":"5"}}})" "\n", Collect(&seen));
  EXPECT_EQ(seen.errors, 3);
  EXPECT_EQ(seen.versions, std::vector<std::string>{"5"});
}

TEST(WatchDecoderTest, OversizedLineIsAnErrorAndTheStreamRecovers) {
  Seen seen;
  WatchDecoder d(64);
  d.Feed(std::string(50, 'x'), Collect(&seen));
  d.Feed(std::string(50, 'x'), Collect(&seen));  // now over the limit
  EXPECT_EQ(seen.errors, 1);
  EXPECT_EQ(d.buffered(), 0u);
  d.Feed("xxx\n" R"({"type":"ADDED","object":{"metadata":{"resourceVersion":"7"}}})" "\n", Collect(&seen));
  EXPECT_EQ(seen.errors, 1);
  EXPECT_EQ(seen.versions, std::vector<std::string>{"7"});
}

// The property fuzz/watch_stream checks (regression input regression-oversized-line-whole-vs-split):
// a line over the limit was refused when it arrived in pieces but decoded when it came whole.
TEST(WatchDecoderTest, OversizedLineIsRefusedWhereverTheStreamIsCut) {
  const std::string line = R"({"type":"ADDED","object":{"metadata":{"resourceVersion":"1234567"}}})";
  const std::string stream = line + "\n" R"({"type":"ADDED","object":{"metadata":{"resourceVersion":"8"}}})" "\n";
  const std::size_t limit = line.size() - 1;
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    Seen seen;
    WatchDecoder d(limit);
    d.Feed(std::string_view(stream).substr(0, cut), Collect(&seen));
    d.Feed(std::string_view(stream).substr(cut), Collect(&seen));
    EXPECT_EQ(seen.errors, 1) << "cut at " << cut;
    EXPECT_EQ(seen.versions, std::vector<std::string>{"8"}) << "cut at " << cut;
  }
}

TEST(WatchDecoderTest, ErrorEventCarriesTheServersStatus) {
  auto e = DecodeWatchLine(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old","reason":"Expired","code":410}})");
  ASSERT_TRUE(e.ok());
  Status s = e->ErrorStatus();
  EXPECT_TRUE(s.IsGone());
  EXPECT_EQ(s.code(), 410);
  EXPECT_EQ(s.reason(), "Expired");
  EXPECT_EQ(s.message(), "too old");
}

}  // namespace
}  // namespace kube
