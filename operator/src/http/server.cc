#include "http/server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace ncclop::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

// One connection: read a request, answer, repeat while keep-alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const std::map<std::string, Handler>* handlers)
      : stream_(std::move(socket)), handlers_(handlers) {}

  void Start() { Read(); }

 private:
  void Read() {
    request_ = {};
    stream_.expires_after(std::chrono::seconds(30));
    bhttp::async_read(stream_, buffer_, request_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec) return;  // closed, timed out or garbage: drop the connection
    auto response = std::make_shared<bhttp::response<bhttp::string_body>>();
    response->version(request_.version());
    response->keep_alive(request_.keep_alive());
    std::string target(request_.target());
    target = target.substr(0, target.find('?'));
    auto it = handlers_->find(target);
    if (request_.method() != bhttp::verb::get && request_.method() != bhttp::verb::head) {
      response->result(bhttp::status::method_not_allowed);
      response->set(bhttp::field::allow, "GET, HEAD");
      response->body() = "method not allowed\n";
    } else if (it == handlers_->end()) {
      response->result(bhttp::status::not_found);
      response->body() = "not found\n";
    } else {
      Reply reply = it->second();
      response->result(static_cast<bhttp::status>(reply.code));
      response->set(bhttp::field::content_type, reply.content_type);
      response->body() = std::move(reply.body);
    }
    response->prepare_payload();
    if (request_.method() == bhttp::verb::head) response->body().clear();
    bhttp::async_write(stream_, *response,
                       [self = shared_from_this(), response](beast::error_code ec, std::size_t) {
                         if (ec || !response->keep_alive()) {
                           beast::error_code ignored;
                           self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                           return;
                         }
                         self->Read();
                       });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  bhttp::request<bhttp::string_body> request_;
  const std::map<std::string, Handler>* handlers_;
};

}  // namespace

struct Server::Impl {
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::thread thread;
  const std::map<std::string, Handler>* handlers = nullptr;

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) std::make_shared<Session>(std::move(socket), handlers)->Start();
      Accept();
    });
  }
};

kube::Result<BindAddress> ParseBindAddress(const std::string& text) {
  BindAddress out;
  std::string port = text;
  if (auto colon = text.rfind(':'); colon != std::string::npos) {
    out.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
      out.host = out.host.substr(1, out.host.size() - 2);
    }
  }
  try {
    std::size_t used = 0;
    int value = std::stoi(port, &used);
    if (used != port.size() || value < 0 || value > 65535) throw std::out_of_range("port");
    out.port = static_cast<unsigned short>(value);
  } catch (const std::exception&) {
    return kube::Status::Local("InvalidFlag", "bind address \"" + text + "\" is not host:port, :port or port");
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  return out;
}

Server::Server() : impl_(std::make_unique<Impl>()) {}
Server::~Server() { Stop(); }

void Server::Handle(const std::string& path, Handler handler) { handlers_[path] = std::move(handler); }

kube::Status Server::Start(const BindAddress& address) {
  beast::error_code ec;
  auto ip = asio::ip::make_address(address.host, ec);
  if (ec) return kube::Status::Local("InvalidFlag", "\"" + address.host + "\" is not an IP address");
  tcp::endpoint endpoint(ip, address.port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return kube::Status::Local("BindFailed", "cannot listen on " + address.host + ":" +
                                                 std::to_string(address.port) + ": " + ec.message());
  }
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->handlers = &handlers_;
  impl_->Accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
  return kube::Status::Ok();
}

void Server::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->io.stop();
  impl_->thread.join();
}

}  // namespace ncclop::http
