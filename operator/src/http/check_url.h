// nccl-operator --check-url=URL: one plain-HTTP GET from the operator's own image, which has no
// shell and no curl. The chart's `helm test` pod runs it against the operator's Service.
#pragma once

#include <chrono>
#include <string>

#include "kube/status.h"

namespace ncclop::http {

struct Answer {
  int code = 0;
  std::string body;
};

// GET `url` (http://host[:port][/path]); an error when the URL is not such a URL or no answer
// came within `timeout` (name resolution, connect, request and response together).
kube::Result<Answer> Get(const std::string& url, std::chrono::milliseconds timeout);

}  // namespace ncclop::http
