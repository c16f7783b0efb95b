// Builds the id source PickIdSource (id_source.h) chose for the config. In Kubernetes mode this
// loads the client's credentials (in-cluster, or --kubeconfig), and completes `config` with the
// client's namespace when the environment named none; `config` and `board` must outlive the source.
// `client` (may be null) gets the Kubernetes client the source talks through (null in standalone
// mode), for the progress annotation of pod 0 (progress_annotator.h).
#pragma once

#include <memory>
#include <variant>

#include "config.h"
#include "kube/client.h"
#include "id_board.h"
#include "id_source.h"

namespace sidecar {

// A ConfigError when the API server cannot be reached: no credentials, or no namespace.
std::variant<std::unique_ptr<IdSource>, ConfigError> MakeIdSource(Config& config, IdBoard& board,
                                                                  std::shared_ptr<kube::Client>* client = nullptr);

}  // namespace sidecar
