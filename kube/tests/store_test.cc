#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kube/cache_updater.h"
#include "kube/store.h"

namespace kube {
namespace {

nlohmann::json Pod(const std::string& ns, const std::string& name, const std::string& rv,
                   const std::string& job = "") {
  nlohmann::json p = {{"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", ns}, {"resourceVersion", rv}}}};
  if (!job.empty()) p["metadata"]["labels"]["nccl.dev/job-name"] = job;
  return p;
}

TEST(StoreTest, KeysAndIndexes) {
  Store s;
  s.AddIndex("job", IndexByLabel("nccl.dev/job-name"));
  s.Upsert(std::make_shared<const nlohmann::json>(Pod("a", "p0", "1", "j1")));
  s.Upsert(std::make_shared<const nlohmann::json>(Pod("a", "p1", "2", "j1")));
  s.Upsert(std::make_shared<const nlohmann::json>(Pod("b", "p0", "3", "j2")));
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.ByIndex("job", "j1").size(), 2u);
  ASSERT_NE(s.Get("a", "p0"), nullptr);
  EXPECT_EQ(s.Get("b/p0")->at("metadata").at("resourceVersion"), "3");
  // Relabelling moves the object between index values.
  s.Upsert(std::make_shared<const nlohmann::json>(Pod("a", "p1", "4", "j2")));
  EXPECT_EQ(s.ByIndex("job", "j1").size(), 1u);
  EXPECT_EQ(s.ByIndex("job", "j2").size(), 2u);
  s.Remove("a/p0");
  EXPECT_TRUE(s.ByIndex("job", "j1").empty());
  EXPECT_EQ(SplitKey("ns/x"), (std::pair<std::string, std::string>{"ns", "x"}));
  EXPECT_EQ(SplitKey("x"), (std::pair<std::string, std::string>{"", "x"}));
}

TEST(CacheUpdaterTest, ListThenEventsDriveHandlersAndCache) {
  Store store;
  store.AddIndex("job", IndexByLabel("nccl.dev/job-name"));
  std::vector<std::string> calls;
  std::vector<EventHandlers> handlers{{
      [&](const ObjectPtr& o) { calls.push_back("add " + ObjectKey(*o)); },
      [&](const ObjectPtr& old, const ObjectPtr& now) {
        calls.push_back("update " + ObjectKey(*now) + " " + old->at("metadata").at("resourceVersion").get<std::string>() +
                        "->" + now->at("metadata").at("resourceVersion").get<std::string>());
      },
      [&](const ObjectPtr& o) { calls.push_back("delete " + ObjectKey(*o)); },
  }};
  CacheUpdater r(&store, &handlers);
  r.ApplyList({Pod("a", "p0", "1", "j"), Pod("a", "p1", "2", "j")}, "2");
  EXPECT_EQ(r.resource_version(), "2");
  r.ApplyEvent(WatchEvent{EventType::kModified, Pod("a", "p0", "3", "j")});
  r.ApplyEvent(WatchEvent{EventType::kDeleted, Pod("a", "p1", "4", "j")});
  r.ApplyEvent(WatchEvent{EventType::kBookmark, {{"metadata", {{"resourceVersion", "9"}}}}});
  EXPECT_EQ(r.resource_version(), "9");
  EXPECT_FALSE(r.ApplyEvent(WatchEvent{EventType::kError, {{"code", 410}}}));
  // A relist that misses p0 and brings p2 reports the delete it never saw as an event.
  r.ApplyList({Pod("a", "p2", "10", "j")}, "10");
  EXPECT_EQ(calls, (std::vector<std::string>{"add a/p0", "add a/p1", "update a/p0 1->3", "delete a/p1",
                                              "add a/p2", "delete a/p0"}));
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(store.ByIndex("job", "j").size(), 1u);
}

// before_delete sees the object while the cache still holds it (a reader that no longer finds it
// can count on what the handler recorded); on_delete after it is gone. A relist's removals too.
TEST(CacheUpdaterTest, BeforeDeleteRunsWhileTheCacheStillHoldsTheObject) {
  Store store;
  std::vector<std::string> calls;
  auto cached = [&](const ObjectPtr& o) { return store.Get(ObjectKey(*o)) != nullptr ? " cached" : " gone"; };
  std::vector<EventHandlers> handlers{{
      .on_delete = [&](const ObjectPtr& o) { calls.push_back("delete " + ObjectKey(*o) + cached(o)); },
      .before_delete = [&](const ObjectPtr& o) { calls.push_back("before " + ObjectKey(*o) + cached(o)); },
  }};
  CacheUpdater r(&store, &handlers);
  r.ApplyList({Pod("a", "p0", "1", "j"), Pod("a", "p1", "2", "j")}, "2");
  r.ApplyEvent(WatchEvent{EventType::kDeleted, Pod("a", "p1", "3", "j")});
  r.ApplyList({Pod("a", "p2", "10", "j")}, "10");
  EXPECT_EQ(calls, (std::vector<std::string>{"before a/p1 cached", "delete a/p1 gone", "before a/p0 cached",
                                              "delete a/p0 gone"}));
}

TEST(CacheUpdaterTest, TransformRunsBeforeCacheAndHandlers) {
  Store store;
  std::vector<std::string> seen;  // what handlers saw of the "big" field
  auto record = [&](const ObjectPtr& o) { seen.push_back(o->contains("spec") ? "spec" : "trimmed"); };
  std::vector<EventHandlers> handlers{{record, [&](const ObjectPtr&, const ObjectPtr& o) { record(o); }, record}};
  int calls = 0;
  CacheUpdater r(&store, &handlers, [&](nlohmann::json& o) {
    ++calls;
    o.erase("spec");
  });
  auto with_spec = [](nlohmann::json p) {
    p["spec"] = {{"containers", nlohmann::json::array({{{"name", "c"}}})}};
    return p;
  };
  r.ApplyList({with_spec(Pod("a", "p0", "1")), with_spec(Pod("a", "p1", "2"))}, "2");
  r.ApplyEvent(WatchEvent{EventType::kAdded, with_spec(Pod("a", "p2", "3"))});
  r.ApplyEvent(WatchEvent{EventType::kModified, with_spec(Pod("a", "p0", "4"))});
  r.ApplyEvent(WatchEvent{EventType::kDeleted, with_spec(Pod("a", "p1", "5"))});
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(seen, std::vector<std::string>(5, "trimmed"));
  ASSERT_EQ(store.size(), 2u);
  for (const ObjectPtr& o : store.List()) EXPECT_FALSE(o->contains("spec"));
  // The key fields survive, so the delete found its object.
  EXPECT_EQ(store.Get("a", "p1"), nullptr);
  EXPECT_EQ(store.Get("a", "p0")->at("metadata").at("resourceVersion"), "4");
  // A prepared list is stored as given.
  r.ApplyPreparedList({with_spec(Pod("a", "p3", "6"))}, "6");
  EXPECT_EQ(calls, 5);
  EXPECT_TRUE(store.Get("a", "p3")->contains("spec"));
}

TEST(StripManagedFieldsTest, RemovesOnlyManagedFields) {
  nlohmann::json o = Pod("a", "p0", "1", "j");
  o["metadata"]["managedFields"] = nlohmann::json::array({{{"manager", "kubectl"}}});
  StripManagedFields(o);
  EXPECT_FALSE(o["metadata"].contains("managedFields"));
  EXPECT_EQ(o, Pod("a", "p0", "1", "j"));
  nlohmann::json not_object = 3;
  StripManagedFields(not_object);  // no crash on garbage
  EXPECT_EQ(not_object, 3);
}

}  // namespace
}  // namespace kube
