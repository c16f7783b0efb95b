// How both of the sidecar's servers answer: JSON bodies, errors as {"error": "..."}.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "http_message.h"

namespace sidecar {

HttpResponse JsonReply(int status, const nlohmann::json& body);
HttpResponse ErrorReply(int status, const std::string& message);
HttpResponse TextReply(int status, std::string text);

}  // namespace sidecar
