#include "id_source.h"

namespace sidecar {

IdSourceKind PickIdSource(const Config& config) {
  if (!config.standalone) return config.root() ? IdSourceKind::kConfigMapRoot : IdSourceKind::kConfigMap;
  // Every sidecar, roots too, gathers the list from the root sidecars; a root's own id waits in
  // its API server (GET /v1/root-id) for the others to ask.
  if (config.bootstrap_roots > 1) return IdSourceKind::kRootSidecars;
  return config.root() ? IdSourceKind::kStandaloneRoot : IdSourceKind::kRootSidecar;
}

}  // namespace sidecar
