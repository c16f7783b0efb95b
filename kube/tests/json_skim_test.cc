#include "kube/json_skim.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kube/watch.h"

namespace kube {
namespace {

using Json = nlohmann::json;

// A watch event of a pod as the API server sends one, with the awkward parts a skipper can
// get wrong: quotes, backslashes and brackets inside strings, nested arrays, unicode, every
// kind of scalar, and a key that only looks like a dropped one.
const char* kEvent = R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1",
  "metadata":{"name":"demo-0","namespace":"ml","labels":{"nccl.dev/index":"0","spec":"x"},
    "managedFields":[{"manager":"a\"}]{[","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:x":{}}}}},{"manager":"b\\"}],
    "annotations":{"note":"ends with a backslash \\","q":"\"spec\": {","u":"caf\u00e9 \ud83d\ude00"}},
  "spec" : {"containers":[{"name":"trainer","args":["}","]","{\"a\":[1,2]}"],"env":[{"name":"A","value":"1"}]}],
    "nodeName":null,"priority":0,"hostNetwork":false,"x":-1.5e3},
  "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"spec":{"kept":true},"n":[1,[2,[3]],{}],"e":{},"a":[]}}}
)";

Json Without(Json j, const std::vector<MemberPath>& paths) {
  for (const MemberPath& p : paths) {
    Json* at = &j;
    for (std::size_t i = 0; i + 1 < p.size() && at != nullptr; ++i) {
      auto it = at->find(p[i]);
      at = it != at->end() && it->is_object() ? &*it : nullptr;
    }
    if (at != nullptr) at->erase(p.back());
  }
  return j;
}

TEST(DropMembers, ParsesToTheObjectWithoutThoseMembers) {
  const std::vector<MemberPath> paths = {ParseMemberPath("object.spec"), ParseMemberPath("object.metadata.managedFields"),
                                         ParseMemberPath("object.absent.deeper"), ParseMemberPath("type.not-an-object")};
  auto skimmed = DropMembers(kEvent, paths);
  ASSERT_TRUE(skimmed);
  const Json want = Without(Json::parse(kEvent), paths);
  EXPECT_EQ(Json::parse(*skimmed), want);
  EXPECT_FALSE(want["object"].contains("spec"));
  EXPECT_EQ(want["object"]["status"]["spec"]["kept"], true) << "a member of that name elsewhere stays";
  EXPECT_EQ(want["object"]["metadata"]["labels"]["spec"], "x");
  EXPECT_LT(skimmed->size(), std::string(kEvent).size() * 2 / 3);
}

TEST(DropMembers, NoPathsOrNothingToDropKeepsTheValue) {
  for (const char* text : {R"({"a":1})", R"( [1, {"spec": 2}] )", R"("spec")", "true", R"({})", R"({"object":{}})"}) {
    auto skimmed = DropMembers(text, {ParseMemberPath("object.spec")});
    ASSERT_TRUE(skimmed) << text;
    EXPECT_EQ(Json::parse(*skimmed), Json::parse(text)) << text;
  }
  auto first = DropMembers(R"({"spec":1,"b":2})", {{"spec"}});
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, R"({"b":2})") << "no comma left behind";
  auto only = DropMembers(R"({ "spec" : [1] })", {{"spec"}});
  ASSERT_TRUE(only);
  EXPECT_EQ(*only, "{}");
}

TEST(DropMembers, TextThatIsNotWellFormedWhereReadIsRefused) {
  for (const char* text : {R"({"a":1)", R"({"a" 1})", R"({"a":"x)", R"({"object":{"spec":[1,2})", R"({"a":1} x)",
                           R"({a:1})", R"({"a":1,})", ""}) {
    EXPECT_FALSE(DropMembers(text, {ParseMemberPath("object.spec")})) << text;
  }
}

TEST(DecodeWatchLine, DroppedMembersAreNotInTheObjectAndTheRestIsAsParsedWhole) {
  std::string line = kEvent;
  std::erase(line, '\n');
  auto whole = DecodeWatchLine(line);
  auto skimmed = DecodeWatchLine(line, {{"object", "spec"}, {"object", "metadata", "managedFields"}});
  ASSERT_TRUE(whole.ok());
  ASSERT_TRUE(skimmed.ok());
  EXPECT_EQ(skimmed->type, EventType::kModified);
  EXPECT_EQ(skimmed->object, Without(whole->object, {{"spec"}, {"metadata", "managedFields"}}));
  // A broken line is the same DecodeError with or without members to drop.
  auto broken = DecodeWatchLine(R"({"type":"ADDED","object":{"spec":)", {{"object", "spec"}});
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().reason(), DecodeWatchLine(R"({"type":"ADDED","object":{"spec":)").status().reason());
}

TEST(WatchDecoder, DropsMembersOfEachObject) {
  WatchDecoder decoder(WatchDecoder::kDefaultMaxLineBytes, {{"spec"}});
  std::vector<Json> objects;
  const std::string stream = R"({"type":"ADDED","object":{"metadata":{"name":"a"},"spec":{"x":1},"status":{}}})"
                             "\n"
                             R"({"type":"DELETED","object":{"metadata":{"name":"b"},"spec":"}"}})"
                             "\n";
  decoder.Feed(stream.substr(0, 30), [&](Result<WatchEvent>&& e) { objects.push_back(e->object); });
  decoder.Feed(stream.substr(30), [&](Result<WatchEvent>&& e) { objects.push_back(e->object); });
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[0], Json::parse(R"({"metadata":{"name":"a"},"status":{}})"));
  EXPECT_EQ(objects[1], Json::parse(R"({"metadata":{"name":"b"}})"));
}

}  // namespace
}  // namespace kube
