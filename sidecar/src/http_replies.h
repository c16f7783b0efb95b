// How both of the sidecar's servers answer: JSON bodies, errors as {"error": "..."}, 405 with Allow.
#pragma once

#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace sidecar {

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body);
void ReplyError(httplib::Response& res, int status, const std::string& message);

// Routes every method other than `allowed` on `path` to 405, so a wrong method is told so
// rather than getting a 404 that suggests a wrong path.
void RefuseOtherMethods(httplib::Server& server, const std::string& path, const std::string& allowed);

}  // namespace sidecar
