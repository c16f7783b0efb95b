#include "api/kueue_topology.h"

#include <gtest/gtest.h>

#include "api/nccl_job.h"
#include "test_jobs.h"

namespace ncclop::api {
namespace {

using Json = nlohmann::json;

KueueTopologyRequest Parsed(const Json& annotations, int replicas = 8) {
  auto request = ParseKueueTopologyRequest(annotations, replicas);
  EXPECT_TRUE(request.ok()) << request.status().message();
  return request.ok() ? *request : KueueTopologyRequest{};
}

std::string Refusal(const Json& annotations, int replicas = 8) {
  auto request = ParseKueueTopologyRequest(annotations, replicas);
  EXPECT_FALSE(request.ok()) << annotations.dump() << " was taken";
  if (request.ok()) return "";
  EXPECT_EQ(request.status().reason(), "InvalidSpec");
  return request.status().message();
}

TEST(KueueTopologyRequest, NoneAskedForIsEmpty) {
  EXPECT_EQ(Parsed(Json()), KueueTopologyRequest{});
  EXPECT_EQ(Parsed(Json::parse(R"({"team":"a"})")), KueueTopologyRequest{});
  EXPECT_FALSE(Parsed(Json()).NamesPlacement());
}

TEST(KueueTopologyRequest, ReadsEachAnnotationAsKueueDoes) {
  EXPECT_EQ(Parsed(Json::parse(R"({"kueue.x-k8s.io/podset-required-topology":"example.com/rack"})")).required, "example.com/rack");
  EXPECT_EQ(Parsed(Json::parse(R"({"kueue.x-k8s.io/podset-preferred-topology":"kubernetes.io/hostname"})")).preferred,
            "kubernetes.io/hostname");
  EXPECT_EQ(Parsed(Json::parse(R"({"kueue.x-k8s.io/podset-unconstrained-topology":"True"})")).unconstrained, true)
      << "Go's ParseBool, as Kueue reads it";
  EXPECT_EQ(Parsed(Json::parse(R"({"kueue.x-k8s.io/podset-unconstrained-topology":"0"})")).unconstrained, false);
  const KueueTopologyRequest sliced = Parsed(Json::parse(R"({"kueue.x-k8s.io/podset-required-topology":"block",
      "kueue.x-k8s.io/podset-slice-required-topology":"rack","kueue.x-k8s.io/podset-slice-size":"4"})"));
  EXPECT_EQ(sliced.required, "block");
  EXPECT_EQ(sliced.slice_required, "rack");
  EXPECT_EQ(sliced.slice_size, 4);
  EXPECT_TRUE(sliced.NamesPlacement());
  EXPECT_FALSE(Parsed(Json::parse(R"({"kueue.x-k8s.io/podset-slice-required-topology":"rack",
      "kueue.x-k8s.io/podset-slice-size":"2"})")).NamesPlacement())
      << "slices alone name no placement of the whole (Kueue then adds unconstrained to the pods)";
  const KueueTopologyRequest layered = Parsed(Json::parse(R"({"kueue.x-k8s.io/podset-slice-required-topology-constraints":
      "[{\"topology\":\"block\",\"size\":8},{\"topology\":\"rack\",\"size\":4}]"})"));
  EXPECT_EQ(layered.slice_constraints, Json::parse(R"([{"topology":"block","size":8},{"topology":"rack","size":4}])"));
}

TEST(KueueTopologyRequest, RefusesWhatKueuesWebhookRefuses) {
  EXPECT_NE(Refusal(Json::parse(R"({"kueue.x-k8s.io/podset-required-topology":"rack",
      "kueue.x-k8s.io/podset-preferred-topology":"block"})")).find("at most one of them"), std::string::npos);
  EXPECT_NE(Refusal(Json::parse(R"({"kueue.x-k8s.io/podset-required-topology":"rack",
      "kueue.x-k8s.io/podset-unconstrained-topology":"true"})")).find("at most one of them"), std::string::npos);
  for (const char* bad : {"", "-rack", "rack-", "a/b/c", "/rack", "Example.com/rack", "r a c k",
                          "x234567890123456789012345678901234567890123456789012345678901234"}) {
    const std::string message = Refusal({{"kueue.x-k8s.io/podset-required-topology", bad}});
    EXPECT_NE(message.find("must be a node label key"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("spec.template.metadata.annotations[kueue.x-k8s.io/podset-required-topology]"), std::string::npos);
  }
  EXPECT_NE(Refusal(Json::parse(R"({"kueue.x-k8s.io/podset-unconstrained-topology":"yes"})")).find("\"true\" or \"false\""),
            std::string::npos);
  EXPECT_NE(Refusal(Json::parse(R"({"kueue.x-k8s.io/podset-slice-required-topology":"rack"})"))
                .find("[kueue.x-k8s.io/podset-slice-size] must be set together with kueue.x-k8s.io/podset-slice-required-topology"),
            std::string::npos);
  EXPECT_NE(Refusal(Json::parse(R"({"kueue.x-k8s.io/podset-slice-size":"4"})"))
                .find("[kueue.x-k8s.io/podset-slice-required-topology] must be set together"),
            std::string::npos);
  for (const char* bad : {"0", "-1", "four", "4 ", "9"}) {
    EXPECT_NE(Refusal({{"kueue.x-k8s.io/podset-slice-required-topology", "rack"}, {"kueue.x-k8s.io/podset-slice-size", bad}})
                  .find("must be a number of pods from 1 to spec.replicas (8)"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(Refusal(Json::parse(R"({"kueue.x-k8s.io/podset-group-name":"g","kueue.x-k8s.io/podset-required-topology":"rack"})"))
                .find("one pod set"),
            std::string::npos);
  EXPECT_NE(Refusal(Json::parse(R"({"kueue.x-k8s.io/podset-required-topology":7})")).find("must be a string"), std::string::npos);
}

TEST(KueueTopologyRequest, RefusesBadSliceLayers) {
  auto layers = [](const std::string& value) {
    return Refusal({{"kueue.x-k8s.io/podset-slice-required-topology-constraints", value}});
  };
  EXPECT_NE(layers("rack").find("must be a JSON array"), std::string::npos);
  EXPECT_NE(layers("[]").find("1 to 3 layers"), std::string::npos);
  EXPECT_NE(layers(R"([{"topology":"a","size":8},{"topology":"b","size":4},{"topology":"c","size":2},{"topology":"d","size":1}])")
                .find("1 to 3 layers"),
            std::string::npos);
  EXPECT_NE(layers(R"([{"topology":"rack"}])").find("layers must be"), std::string::npos);
  EXPECT_NE(layers(R"([{"topology":"rack","size":0}])").find("size must be at least 1"), std::string::npos);
  EXPECT_NE(layers(R"([{"topology":"rack","size":4},{"topology":"rack","size":2}])").find("twice"), std::string::npos);
  EXPECT_NE(layers(R"([{"topology":"block","size":8},{"topology":"rack","size":3}])").find("3 does not divide 8"),
            std::string::npos);
  EXPECT_NE(layers(R"([{"topology":"block","size":16}])").find("must not exceed spec.replicas (8)"), std::string::npos);
  EXPECT_NE(Refusal(Json::parse(R"({"kueue.x-k8s.io/podset-slice-required-topology":"rack","kueue.x-k8s.io/podset-slice-size":"4",
      "kueue.x-k8s.io/podset-slice-required-topology-constraints":"[{\"topology\":\"rack\",\"size\":4}]"})"))
                .find("it replaces them"),
            std::string::npos);
}

TEST(KueueTopologyRequest, AJobWithABadRequestFailsAsInvalidSpec) {
  Json object = testing::JobJson(8, 1);
  object["spec"]["template"]["metadata"]["annotations"] = {{"kueue.x-k8s.io/podset-slice-required-topology", "rack"},
                                                           {"kueue.x-k8s.io/podset-slice-size", "16"}};
  auto job = ParseNcclJob(object);
  ASSERT_TRUE(job.ok());
  EXPECT_NE(job->spec_error.find("podset-slice-size] must be a number of pods from 1 to spec.replicas (8)"), std::string::npos)
      << job->spec_error;
  object["spec"]["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-slice-size"] = "4";
  job = ParseNcclJob(object);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->spec_error, "");
  EXPECT_EQ(job->spec.kueue_topology.slice_size, 4);
}

}  // namespace
}  // namespace ncclop::api
