// Headless Service <job>: gives every pod the DNS name <job>-<i>.<job>.<ns>.svc (with the
// pod's hostname/subdomain). publishNotReadyAddresses because pods must find each other
// before any of them is ready: readiness comes after the communicator exists.
#pragma once

#include "desired/metadata.h"

namespace ncclop::desired {

Json HeadlessService(const api::NcclJob& job);

}  // namespace ncclop::desired
