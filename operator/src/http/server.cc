#include "http/server.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <list>

namespace ncclop::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using Response = bhttp::response<bhttp::string_body>;

constexpr auto kRequestTimeout = std::chrono::seconds(30);  // to read one whole request
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);

// One open connection, plain or TLS, as the list of open connections sees it.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual void Close() = 0;
};
// The open connections, oldest first; only touched on the server's one io thread.
using Sessions = std::list<std::weak_ptr<Connection>>;

// What every session reads of its server (which outlives them).
struct Routes {
  const std::map<std::string, Handler>* handlers = nullptr;
  Sessions* sessions = nullptr;
  const Gate* gate = nullptr;              // empty: every request goes to its handler
  asio::thread_pool* gate_thread = nullptr;  // where the gate runs
};

void Fill(Response* response, Reply reply) {
  response->result(static_cast<bhttp::status>(reply.code));
  response->set(bhttp::field::content_type, reply.content_type);
  response->body() = std::move(reply.body);
}

// One connection: (the TLS handshake,) read a request, answer, repeat while keep-alive.
template <class Stream>
class Session : public Connection, public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <class... Args>
  explicit Session(const Routes& routes, Args&&... stream_args)
      : stream_(std::forward<Args>(stream_args)...), routes_(routes) {}
  ~Session() override {
    if (listed_) routes_.sessions->erase(self_);
  }

  void Start(Sessions::iterator self) {
    self_ = self;
    listed_ = true;
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
      stream_.async_handshake(asio::ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (!ec) self->Read();
      });
    } else {
      Read();
    }
  }
  // Closes the connection (already taken off the list); the pending read or write then ends
  // and drops the session.
  void Close() override {
    listed_ = false;
    beast::error_code ignored;
    Socket().shutdown(tcp::socket::shutdown_both, ignored);
    Socket().close(ignored);
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  tcp::socket& Socket() { return beast::get_lowest_layer(stream_).socket(); }

  void Read() {
    request_ = {};
    beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
    bhttp::async_read(stream_, buffer_, request_,
                      [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec) return;  // closed, timed out or garbage: drop the connection
    auto response = std::make_shared<Response>();
    response->version(request_.version());
    response->keep_alive(request_.keep_alive());
    std::string target(request_.target());
    target = target.substr(0, target.find('?'));
    auto it = routes_.handlers->find(target);
    if (request_.method() != bhttp::verb::get && request_.method() != bhttp::verb::head) {
      response->result(bhttp::status::method_not_allowed);
      response->set(bhttp::field::allow, "GET, HEAD");
      response->body() = "method not allowed\n";
    } else if (it == routes_.handlers->end()) {
      response->result(bhttp::status::not_found);
      response->body() = "not found\n";
    } else if (routes_.gate != nullptr && *routes_.gate) {
      // The gate may wait on the API server: off the I/O thread, and back onto it to write.
      asio::post(*routes_.gate_thread, [self = this->shared_from_this(), response, handler = &it->second,
                                        authorization = std::string(request_[bhttp::field::authorization])] {
        std::optional<Reply> refused = (*self->routes_.gate)(authorization);
        Reply reply = refused ? std::move(*refused) : (*handler)();
        asio::post(self->stream_.get_executor(), [self, response, reply = std::move(reply)]() mutable {
          Fill(response.get(), std::move(reply));
          self->Write(response);
        });
      });
      return;
    } else {
      Fill(response.get(), it->second());
    }
    Write(response);
  }

  void Write(const std::shared_ptr<Response>& response) {
    response->prepare_payload();
    if (request_.method() == bhttp::verb::head) response->body().clear();
    bhttp::async_write(stream_, *response,
                       [self = this->shared_from_this(), response](beast::error_code ec, std::size_t) {
                         if (ec || !response->keep_alive()) {
                           beast::error_code ignored;
                           self->Socket().shutdown(tcp::socket::shutdown_send, ignored);
                           return;
                         }
                         self->Read();
                       });
  }

  Stream stream_;
  beast::flat_buffer buffer_;
  bhttp::request<bhttp::string_body> request_;
  Routes routes_;
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
  Routes routes;
  std::size_t max_connections = kDefaultMaxConnections;
  std::unique_ptr<asio::ssl::context> tls;  // set: HTTPS
  Gate gate;
  // After io: destroyed (its handlers, holding sessions, dropped) before the io_context.
  std::unique_ptr<asio::thread_pool> gate_thread;

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
      if (tls) {
        Open(std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(routes, std::move(socket), *tls));
      } else {
        Open(std::make_shared<Session<beast::tcp_stream>>(routes, std::move(socket)));
      }
      Accept();
    });
  }

  template <class S>
  void Open(std::shared_ptr<S> session) {
    session->Start(sessions.insert(sessions.end(), session));
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

kube::Status Server::UseTls(const std::string& cert_pem, const std::string& key_pem) {
  auto tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  beast::error_code ec;
  tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1,
                   ec);
  if (!ec) tls->use_certificate_chain(asio::buffer(cert_pem), ec);
  if (!ec) tls->use_private_key(asio::buffer(key_pem), asio::ssl::context::pem, ec);
  if (ec) return kube::Status::Local("InvalidCertificate", "cannot serve TLS with the certificate and key: " + ec.message());
  impl_->tls = std::move(tls);
  return kube::Status::Ok();
}

void Server::SetGate(Gate gate) { impl_->gate = std::move(gate); }

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
  impl_->routes.handlers = &handlers_;
  impl_->routes.sessions = &impl_->sessions;
  if (impl_->gate) {
    impl_->gate_thread = std::make_unique<asio::thread_pool>(1);
    impl_->routes.gate = &impl_->gate;
    impl_->routes.gate_thread = impl_->gate_thread.get();
  }
  impl_->Accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
  return kube::Status::Ok();
}

void Server::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->io.stop();
  impl_->thread.join();
  if (impl_->gate_thread) impl_->gate_thread->join();  // a gate in flight ends by its own deadline
}

}  // namespace ncclop::http
