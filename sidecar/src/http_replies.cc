#include "http_replies.h"

namespace sidecar {

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void ReplyError(httplib::Response& res, int status, const std::string& message) {
  ReplyJson(res, status, {{"error", message}});
}

void RefuseOtherMethods(httplib::Server& server, const std::string& path, const std::string& allowed) {
  auto refuse = [allowed](const httplib::Request& req, httplib::Response& res) {
    res.set_header("Allow", allowed);
    ReplyError(res, 405, req.method + " is not allowed on " + req.path + "; use " + allowed);
  };
  auto is_allowed = [&](const std::string& m) { return allowed.find(m) != std::string::npos; };
  if (!is_allowed("GET")) server.Get(path, refuse);
  if (!is_allowed("POST")) server.Post(path, refuse);
  server.Put(path, refuse);
  server.Patch(path, refuse);
  server.Delete(path, refuse);
  server.Options(path, refuse);
}

}  // namespace sidecar
