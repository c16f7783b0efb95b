// A self-signed TLS certificate made in memory at start, for /metrics over HTTPS when no
// certificate is given (--metrics-secure without --metrics-cert-dir), as controller-runtime's
// metrics server makes one: the traffic is encrypted, and the scraper does not verify the server.
#pragma once

#include <string>

#include "kube/status.h"

namespace ncclop::http {

struct CertificateAndKey {
  std::string cert_pem;
  std::string key_pem;
};

// An ECDSA P-256 key and a certificate for `common_name` (also its DNS name), valid one year.
kube::Result<CertificateAndKey> SelfSignedCertificate(const std::string& common_name);

}  // namespace ncclop::http
