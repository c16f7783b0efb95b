#include <gtest/gtest.h>

#include "contract/names.h"
#include "pod_annotations.h"
#include "progress_annotator.h"

namespace sidecar {
namespace {

TEST(ProgressAnnotation, CarriesTheAttemptAndTheNewestReport) {
  RankProgress newest;
  newest.report.rank = 2;
  newest.report.step = 40;
  newest.report.total = 100;
  newest.report.metrics = {{"loss", 1.5}};
  newest.received.wall = std::chrono::system_clock::time_point() + std::chrono::hours(24 * 365 * 57);
  EXPECT_EQ(nlohmann::json::parse(ProgressAnnotationValue(newest, 3)),
            nlohmann::json::parse(R"({"attempt":3,"step":40,"total":100,"metrics":{"loss":1.5},
                                      "time":"2026-12-18T00:00:00.000Z"})"));
  newest.report.total.reset();
  newest.report.metrics.clear();
  nlohmann::json bare = nlohmann::json::parse(ProgressAnnotationValue(newest, 3));
  EXPECT_FALSE(bare.contains("total"));
  EXPECT_FALSE(bare.contains("metrics"));
}

TEST(PodAnnotations, APatchTouchesTheAnnotationsOnly) {
  nlohmann::json pod = {{"metadata", {{"name", "demo-0"}, {"annotations", {{"other", "kept"}}}}}};
  pod.merge_patch(AnnotationPatch({{contract::kAnnotationProgress, "{}"}}));
  EXPECT_EQ(PodAnnotation(pod, contract::kAnnotationProgress), "{}");
  EXPECT_EQ(PodAnnotation(pod, "other"), "kept");
  EXPECT_EQ(pod["metadata"]["name"], "demo-0");
  EXPECT_FALSE(PodAnnotation(pod, "absent"));
}

}  // namespace
}  // namespace sidecar
