// Which id source each mode runs (PickIdSource, pure), and what MakeIdSource builds from it
// without reaching any server.
#include "id_source.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "configmap_id_source.h"
#include "id_board.h"
#include "make_id_source.h"
#include "peer_id_source.h"
#include "standalone_root_id_source.h"

namespace sidecar {
namespace {

// Pod `index` of a job of `replicas` one-GPU pods with `roots` bootstrap roots.
Config PodConfig(int index, int replicas, int roots, bool standalone) {
  Config c;
  c.job = "demo";
  c.job_uid = "uid-1";
  c.index = index;
  c.replicas = replicas;
  c.world_size = replicas;
  c.attempt = 1;
  c.bootstrap_roots = roots;
  c.standalone = standalone;
  return c;
}

TEST(PickIdSource, KubernetesModeWatchesTheConfigMapAndRootsReport) {
  EXPECT_EQ(PickIdSource(PodConfig(0, 2, 1, false)), IdSourceKind::kConfigMapRoot);
  EXPECT_EQ(PickIdSource(PodConfig(1, 2, 1, false)), IdSourceKind::kConfigMap);
  // Two roots of four pods: pods 0 and 2 make an id.
  EXPECT_EQ(PickIdSource(PodConfig(0, 4, 2, false)), IdSourceKind::kConfigMapRoot);
  EXPECT_EQ(PickIdSource(PodConfig(1, 4, 2, false)), IdSourceKind::kConfigMap);
  EXPECT_EQ(PickIdSource(PodConfig(2, 4, 2, false)), IdSourceKind::kConfigMapRoot);
  EXPECT_EQ(PickIdSource(PodConfig(3, 4, 2, false)), IdSourceKind::kConfigMap);
}

TEST(PickIdSource, StandaloneWithOneRootTheRootServesAndTheOthersAskIt) {
  EXPECT_EQ(PickIdSource(PodConfig(0, 2, 1, true)), IdSourceKind::kStandaloneRoot);
  EXPECT_EQ(PickIdSource(PodConfig(1, 2, 1, true)), IdSourceKind::kRootSidecar);
}

TEST(PickIdSource, StandaloneWithSeveralRootsEveryPodGathersTheRootsIds) {
  for (int index = 0; index < 4; ++index) {
    EXPECT_EQ(PickIdSource(PodConfig(index, 4, 2, true)), IdSourceKind::kRootSidecars) << "pod " << index;
  }
}

TEST(MakeIdSource, TheStandaloneRootPutsItsTrainersIdOnTheBoardAndIsReadyAtOnce) {
  Config config = PodConfig(0, 2, 1, true);
  IdBoard board;
  auto made = MakeIdSource(config, board);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<IdSource>>(made));
  IdSource& source = *std::get<std::unique_ptr<IdSource>>(made);
  EXPECT_NE(dynamic_cast<StandaloneRootIdSource*>(&source), nullptr);
  EXPECT_TRUE(source.Ready());
  EXPECT_EQ(board.Check(1).outcome, WaitOutcome::kTimeout);
  source.Keep(1, std::string(128, 'r'));
  EXPECT_TRUE(source.Kept(1, std::string(128, 'r')));
  WaitResult served = board.Check(1);
  ASSERT_EQ(served.outcome, WaitOutcome::kReady);
  EXPECT_EQ(served.published.id, std::string(128, 'r'));
  EXPECT_EQ(served.published.job_uid, "uid-1");
}

TEST(MakeIdSource, AStandalonePeerIsNotReadyBeforeItReachedARoot) {
  Config one_root = PodConfig(1, 2, 1, true);
  one_root.peer_url = "http://127.0.0.1:1";
  Config two_roots = PodConfig(0, 2, 2, true);
  two_roots.root_urls = {"http://127.0.0.1:1", "http://127.0.0.1:2"};
  for (Config* config : {&one_root, &two_roots}) {
    IdBoard board;
    auto made = MakeIdSource(*config, board);
    ASSERT_TRUE(std::holds_alternative<std::unique_ptr<IdSource>>(made));
    IdSource& source = *std::get<std::unique_ptr<IdSource>>(made);
    EXPECT_NE(dynamic_cast<PeerIdSource*>(&source), nullptr);
    EXPECT_FALSE(source.Ready());
    // A root of several keeps nothing here: its id waits in its API server for the others.
    source.Keep(1, std::string(128, 'p'));
    EXPECT_EQ(board.Check(1).outcome, WaitOutcome::kTimeout);
  }
}

TEST(MakeIdSource, KubernetesModeWithoutCredentialsIsAConfigError) {
  Config config = PodConfig(0, 2, 1, false);
  config.kubeconfig = "/nonexistent/kubeconfig";
  IdBoard board;
  auto made = MakeIdSource(config, board);
  ASSERT_TRUE(std::holds_alternative<ConfigError>(made));
  EXPECT_NE(std::get<ConfigError>(made).message.find("/nonexistent/kubeconfig"), std::string::npos)
      << std::get<ConfigError>(made).message;
}

TEST(MakeIdSource, KubernetesModeTakesTheClientsNamespaceWhenTheEnvNamesNone) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("id_source_test_kubeconfig_" + std::to_string(::getpid()));
  std::ofstream(path) << R"(apiVersion: v1
kind: Config
clusters:
- cluster:
    server: https://127.0.0.1:6443
  name: local
contexts:
- context:
    cluster: local
    user: sidecar
    namespace: team-a
  name: local
current-context: local
users:
- name: sidecar
  user:
    token: abc
)";
  Config config = PodConfig(1, 2, 1, false);
  config.kubeconfig = path.string();
  IdBoard board;
  auto made = MakeIdSource(config, board);
  std::filesystem::remove(path);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<IdSource>>(made)) << std::get<ConfigError>(made).message;
  EXPECT_NE(dynamic_cast<ConfigMapIdSource*>(std::get<std::unique_ptr<IdSource>>(made).get()), nullptr);
  EXPECT_EQ(config.name_space, "team-a");
  EXPECT_FALSE(std::get<std::unique_ptr<IdSource>>(made)->Ready()) << "not listed yet";
}

}  // namespace
}  // namespace sidecar
