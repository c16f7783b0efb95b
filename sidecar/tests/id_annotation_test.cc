#include "id_annotation.h"

#include <gtest/gtest.h>

#include "contract/unique_id.h"

namespace sidecar {
namespace {

TEST(IdAnnotation, PatchCarriesBase64IdAndAttemptOnly) {
  std::string id(128, '\x01');
  nlohmann::json patch = BuildIdAnnotationPatch(7, id);
  ASSERT_EQ(patch.size(), 1u);
  ASSERT_EQ(patch["metadata"].size(), 1u);
  const auto& annotations = patch["metadata"]["annotations"];
  EXPECT_EQ(annotations["nccl.dev/unique-id"], contract::Base64Encode(id));
  EXPECT_EQ(annotations["nccl.dev/unique-id-attempt"], "7");
}

TEST(IdAnnotation, RecognisesThePatchedPod) {
  std::string id(128, '\x02');
  nlohmann::json pod = {{"metadata", {{"name", "demo-0"}}}};
  EXPECT_FALSE(PodHasIdAnnotation(pod, 1, id));
  pod.merge_patch(BuildIdAnnotationPatch(1, id));
  EXPECT_TRUE(PodHasIdAnnotation(pod, 1, id));
  EXPECT_FALSE(PodHasIdAnnotation(pod, 2, id));
  EXPECT_FALSE(PodHasIdAnnotation(pod, 1, std::string(128, '\x03')));
}

TEST(IdAnnotation, ReadsBackTheIdOfItsAttemptOnly) {
  const std::string id(128, '\x04');
  nlohmann::json pod = {{"metadata", {{"name", "demo-0"}}}};
  EXPECT_EQ(IdAnnotatedFor(pod, 1), std::nullopt);
  pod.merge_patch(BuildIdAnnotationPatch(1, id));
  EXPECT_EQ(IdAnnotatedFor(pod, 1), id);
  EXPECT_EQ(IdAnnotatedFor(pod, 2), std::nullopt) << "another attempt's";
  pod["metadata"]["annotations"]["nccl.dev/unique-id"] = contract::Base64Encode(std::string(12, 'x'));
  EXPECT_EQ(IdAnnotatedFor(pod, 1), std::nullopt) << "not 128 bytes";
  pod["metadata"]["annotations"]["nccl.dev/unique-id"] = 5;
  EXPECT_EQ(IdAnnotatedFor(pod, 1), std::nullopt);
  EXPECT_EQ(IdAnnotatedFor(nlohmann::json::array(), 1), std::nullopt);
}

}  // namespace
}  // namespace sidecar
