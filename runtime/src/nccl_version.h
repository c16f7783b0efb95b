// The NCCL a trainer's process loaded may be older than the one the runtime was built with (the
// user's image carries its own). What needs a newer one is checked against ncclGetVersion at run
// time and refused with a message naming both versions, instead of failing to load or crashing
// on a symbol the library does not have. Pure: the version code in, the verdict out.
#pragma once

#include <string>
#include <string_view>

#include "nccl_k8s/status.h"

namespace nccl_k8s {

// ncclCommInitRankScalable, the init from several bootstrap roots (NCCLJOB_BOOTSTRAP_ROOTS).
inline constexpr int kNcclScalableInit = 22300;  // 2.23.0

// "2.28.9" for NCCL's version code (major*10000 + minor*100 + patch since 2.9; major*1000 +
// minor*100 + patch before).
std::string NcclVersionString(int code);

// OK when `loaded` is at least `needed`; else kInvalidArgument naming `feature`, both versions and
// what to do.
Status RequireNccl(int loaded, int needed, std::string_view feature);

}  // namespace nccl_k8s
