#include "http/server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <list>

namespace ncclop::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kRequestTimeout = std::chrono::seconds(30);  // to read one whole request
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);

class Session;
// The open connections, oldest first; only touched on the server's one io thread.
using Sessions = std::list<std::weak_ptr<Session>>;

// One connection: read a request, answer, repeat while keep-alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const std::map<std::string, Handler>* handlers, Sessions* sessions)
      : stream_(std::move(socket)), handlers_(handlers), sessions_(sessions) {}
  ~Session() {
    if (listed_) sessions_->erase(self_);
  }

  void Start(Sessions::iterator self) {
    self_ = self;
    listed_ = true;
    Read();
  }
  // Closes the connection (already taken off the list); the pending read or write then ends
  // and drops the session.
  void Close() {
    listed_ = false;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

 private:
  void Read() {
    request_ = {};
    stream_.expires_after(kRequestTimeout);
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
  Sessions* sessions_;
  Sessions::iterator self_;
  bool listed_ = false;
};

}  // namespace

struct Server::Impl {
  // First, so that it outlives the io_context, whose destructor drops the sessions' handlers.
  Sessions sessions;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::thread thread;
  asio::steady_timer retry{io};
  const std::map<std::string, Handler>* handlers = nullptr;
  std::size_t max_connections = kDefaultMaxConnections;

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) {
        // Out of file descriptors (EMFILE/ENFILE) or the like: accepting again at once would
        // spin a core; the listen backlog holds the clients meanwhile.
        retry.expires_after(kAcceptRetry);
        retry.async_wait([this](beast::error_code wait_ec) {
          if (!wait_ec) Accept();
        });
        return;
      }
      // At the limit the oldest connection goes (most likely an idle keep-alive), so a flood of
      // idle connections costs a bounded number of descriptors and never shuts out a probe.
      while (sessions.size() >= max_connections) {
        auto oldest = sessions.front().lock();  // never expired: a session unlists itself
        sessions.pop_front();
        if (oldest) oldest->Close();
      }
      auto session = std::make_shared<Session>(std::move(socket), handlers, &sessions);
      session->Start(sessions.insert(sessions.end(), session));
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

void Server::SetMaxConnections(std::size_t limit) { impl_->max_connections = limit < 1 ? 1 : limit; }

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
