// The id's text form (base64 of the 128-byte ncclUniqueId) as the runtime reads it from the
// sidecar, and what NCCL's bootstrap put in the bytes. Properties: decode(encode(id)) == id for
// any id; any text that decodes is the one canonical encoding of its id (so a corrupted value is
// refused, never read as a different id).
#include <cstdlib>
#include <cstring>
#include <string>

#include "unique_id_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nccl_k8s::IdBytes id{};
  std::memcpy(id.data(), data, std::min(size, id.size()));
  const std::string text = nccl_k8s::IdToBase64(id);
  auto back = nccl_k8s::IdFromBase64(text);
  if (!back || *back != id) std::abort();
  auto hex = nccl_k8s::IdFromHex(nccl_k8s::IdToHex(id));
  if (!hex || *hex != id) std::abort();
  (void)nccl_k8s::DecodeBootstrapAddress(id);

  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (auto decoded = nccl_k8s::IdFromBase64(input)) {
    if (nccl_k8s::IdToBase64(*decoded) != input) std::abort();
  }
  if (auto decoded = nccl_k8s::IdFromHex(input)) {
    if (nccl_k8s::IdFromHex(nccl_k8s::IdToHex(*decoded)) != decoded) std::abort();
  }
  return 0;
}
