#include "http/check_url.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace ncclop::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

struct Target {
  std::string host;
  std::string port = "80";
  std::string path = "/";
};

kube::Result<Target> ParseUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    return kube::Status::Local("InvalidUrl", "\"" + url + "\" is not an http:// URL (plain HTTP only)");
  }
  Target target;
  std::string rest = url.substr(kScheme.size());
  if (const std::size_t slash = rest.find('/'); slash != std::string::npos) {
    target.path = rest.substr(slash);
    rest.resize(slash);
  }
  if (const std::size_t colon = rest.rfind(':'); colon != std::string::npos) {
    target.port = rest.substr(colon + 1);
    rest.resize(colon);
  }
  target.host = rest;
  if (target.host.empty() || target.port.empty()) {
    return kube::Status::Local("InvalidUrl", "\"" + url + "\" names no host or port");
  }
  return target;
}

}  // namespace

kube::Result<Answer> Get(const std::string& url, std::chrono::milliseconds timeout) {
  auto target = ParseUrl(url);
  if (!target.ok()) return target.status();
  net::io_context io;
  net::ip::tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  bhttp::request<bhttp::empty_body> request{bhttp::verb::get, target->path, 11};
  request.set(bhttp::field::host, target->host);
  request.set(bhttp::field::connection, "close");
  beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> response;
  beast::error_code failure;
  std::string step = "resolve";
  bool answered = false;
  // Each step starts the next; io.run_for bounds them all, name resolution included.
  resolver.async_resolve(target->host, target->port, [&](beast::error_code ec, net::ip::tcp::resolver::results_type found) {
    if (ec) return void(failure = ec);
    step = "connect";
    stream.async_connect(found, [&](beast::error_code ec, const net::ip::tcp::endpoint&) {
      if (ec) return void(failure = ec);
      step = "send";
      bhttp::async_write(stream, request, [&](beast::error_code ec, std::size_t) {
        if (ec) return void(failure = ec);
        step = "read";
        bhttp::async_read(stream, buffer, response, [&](beast::error_code ec, std::size_t) {
          if (ec) return void(failure = ec);
          answered = true;
        });
      });
    });
  });
  io.run_for(timeout);
  if (answered) return Answer{response.result_int(), response.body()};
  const std::string why = failure ? failure.message() : "no answer within " + std::to_string(timeout.count()) + " ms";
  return kube::Status::Transport("GET " + url + ": " + step + ": " + why);
}

}  // namespace ncclop::http
