#include "make_id_source.h"

#include <memory>
#include <optional>
#include <utility>

#include "configmap_id_source.h"
#include "kube/client.h"
#include "kube/config.h"
#include "peer_id_source.h"
#include "standalone_root_id_source.h"

namespace sidecar {
namespace {

std::variant<std::unique_ptr<IdSource>, ConfigError> MakeConfigMapIdSource(Config& config, IdBoard& board,
                                                                          bool report,
                                                                          std::shared_ptr<kube::Client>* made) {
  kube::Result<kube::Config> kube_config =
      config.kubeconfig.empty() ? kube::LoadInCluster() : kube::LoadKubeconfigFile(config.kubeconfig);
  if (!kube_config.ok()) return ConfigError{kube_config.status().ToString()};
  if (std::optional<ConfigError> error = UseClientNamespace(&config, kube_config->default_namespace)) {
    return *std::move(error);
  }
  kube::ClientOptions options;
  options.user_agent = "nccl-sidecar/0.1";
  auto client = std::make_shared<kube::Client>(*kube_config, std::move(options));
  if (made) *made = client;
  return std::make_unique<ConfigMapIdSource>(std::move(client), config, board, report);
}

}  // namespace

std::variant<std::unique_ptr<IdSource>, ConfigError> MakeIdSource(Config& config, IdBoard& board,
                                                                  std::shared_ptr<kube::Client>* client) {
  switch (PickIdSource(config)) {
    case IdSourceKind::kConfigMap:
      return MakeConfigMapIdSource(config, board, /*report=*/false, client);
    case IdSourceKind::kConfigMapRoot:
      return MakeConfigMapIdSource(config, board, /*report=*/true, client);
    case IdSourceKind::kStandaloneRoot:
      return std::make_unique<StandaloneRootIdSource>(config, board);
    case IdSourceKind::kRootSidecar:
    case IdSourceKind::kRootSidecars:
      return std::make_unique<PeerIdSource>(config, board);
  }
  return ConfigError{"no id source for this configuration"};  // unreachable: every kind is handled above
}

}  // namespace sidecar
