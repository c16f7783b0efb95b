// Asks NCCL's RAS service for its report, the way NCCL's own `ncclras` does, with a deadline on
// the whole exchange so it never holds its caller longer than that:
//
//   -> CLIENT PROTOCOL 2          <- SERVER PROTOCOL 2   (2 in every NCCL from 2.24 to 2.30)
//   -> SET FORMAT json            <- OK                  (NCCL >= 2.28.7; older: "ERROR: Unknown command ...")
//   -> STATUS                     <- the report, then NCCL closes the connection
//
// The protocol number did not change when JSON came, so the answer to SET FORMAT decides: OK
// means JSON, an error means an older NCCL, asked for its text instead.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "ras_report.h"

namespace sidecar {

// NCCL's own default, NCCL_RAS_ADDR=localhost:28028. NCCL binds the first address getaddrinfo
// gives for the name, ::1 or 127.0.0.1 depending on the pod's /etc/hosts and whether it has IPv6,
// so the client tries each address of the name in turn, as getaddrinfo orders them.
inline constexpr char kRasDefaultHost[] = "localhost";
inline constexpr int kRasDefaultPort = 28028;  // NCCL_RAS_CLIENT_PORT

struct RasClientOptions {
  std::string host = kRasDefaultHost;  // a name /etc/hosts knows, an IPv4 address, or an IPv6 one ("[::1]" too)
  int port = kRasDefaultPort;
  std::chrono::milliseconds connect_timeout{1000};
  // The whole exchange. NCCL gathers the report from every process of the job and gives up on
  // the silent ones after 5 s + 5 s (NCCL_RAS_TIMEOUT_FACTOR times that), so 12 s lets the
  // answer that names them arrive.
  std::chrono::milliseconds deadline{12000};
  bool json = true;  // false: ask for the text report even where JSON is known
  std::size_t max_bytes = 16u << 20;  // a longer answer is refused, not held
};

struct RasAnswer {
  enum class Kind {
    kOk,           // body holds the report
    kUnavailable,  // every address refused: no NCCL in this pod yet, or NCCL_RAS_ENABLE=0
    kFailed,       // something listens but gave no report in time (error says what)
  };
  Kind kind = Kind::kFailed;
  RasFormat format = RasFormat::kJson;
  std::string body;
  std::string server_protocol;  // what followed "SERVER PROTOCOL "
  std::string error;
};

RasAnswer AskRas(const RasClientOptions& options);

}  // namespace sidecar
