#include "http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>
#include <sstream>

#include "kube/warning.h"
#include "logging/log.h"
#include "read_file.h"

namespace kube::internal {
namespace {

// Service-account tokens are rotated by the kubelet; re-reading every minute picks up a new
// one long before the old one expires.
constexpr std::chrono::seconds kTokenRereadPeriod{60};
// Connections kept open for the next request: as many as one reconcile of the operator has pod
// calls in flight (its reconciler's kPodCallsInFlight), so one job's burst reuses its connections;
// several jobs reconciled at once (--concurrency) open more, closed again after their burst.
constexpr std::size_t kMaxIdleHandles = 32;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  const HttpRequest* request;
  CURL* curl;
  HttpResult* result;
  bool decided = false;  // whether the response code has been looked at
  bool success = false;  // 2xx
  bool aborted_by_handler = false;
};

// Collects the final answer's Warning headers; a status line (an interim 100 Continue, a
// redirect) starts over.
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  std::string_view line(data, len);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  constexpr std::string_view kName = "warning:";
  if (line.starts_with("HTTP/")) {
    t->result->warnings.clear();
  } else if (line.size() > kName.size() &&
             std::equal(kName.begin(), kName.end(), line.begin(),
                        [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    for (std::string& text : ParseWarningHeader(line.substr(kName.size()))) {
      t->result->warnings.push_back(std::move(text));
    }
  }
  return len;
}

size_t OnWrite(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  if (!t->request->streaming || !t->request->on_data) {
    t->result->body.append(data, len);
    return len;
  }
  if (!t->decided) {
    long code = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &code);
    t->success = code >= 200 && code < 300;
    t->decided = true;
  }
  if (!t->success) {
    constexpr std::size_t kMaxErrorBody = 64 * 1024;
    if (t->result->body.size() < kMaxErrorBody) t->result->body.append(data, len);
    return len;
  }
  if (!t->request->on_data(std::string_view(data, len))) {
    t->aborted_by_handler = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  return len;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  return t->request->stop.stop_requested() ? 1 : 0;
}

bool TlsIsMbedTls() {
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  return info != nullptr && info->ssl_version != nullptr &&
         std::string_view(info->ssl_version).substr(0, 7) == "mbedTLS";
}

// with_nul: the string's terminating NUL is part of the blob (mbedTLS parses a key as PEM only
// when its buffer ends in NUL, and curl 7.88 hands it the key blob as is).
void SetBlob(CURL* curl, CURLoption option, const std::string& data, bool with_nul = false) {
  curl_blob blob{const_cast<char*>(data.data()), data.size() + (with_nul ? 1 : 0), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

}  // namespace

HttpTransport::HttpTransport(const Config& config, const ClientOptions& options)
    : config_(config), options_(options) {
  GlobalInit();
  // mbedTLS 2.x matches only DNS names and the CN of a certificate, never IP addresses.
  tls_is_mbedtls_ = TlsIsMbedTls();
  tls_route_ = RouteForTlsServerName(config_.server, config_.tls_server_name, !tls_is_mbedtls_);
}

HttpTransport::~HttpTransport() {
  for (void* h : pool_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpTransport::AcquireHandle() {
  {
    std::lock_guard lock(pool_mu_);
    if (!pool_.empty()) {
      void* h = pool_.back();
      pool_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void HttpTransport::ReleaseHandle(void* handle) {
  std::lock_guard lock(pool_mu_);
  if (pool_.size() < kMaxIdleHandles) {
    pool_.push_back(handle);
  } else {
    curl_easy_cleanup(static_cast<CURL*>(handle));
  }
}

void HttpTransport::InvalidateToken() {
  std::lock_guard lock(token_mu_);
  token_loaded_ = false;
}

std::string HttpTransport::BearerToken() {
  if (config_.token_file.empty()) return config_.token;
  std::lock_guard lock(token_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (!token_loaded_ || now - token_read_ >= kTokenRereadPeriod) {
    std::string fresh;
    if (ReadFile(config_.token_file, &fresh)) {
      while (!fresh.empty() && (fresh.back() == '\n' || fresh.back() == '\r' || fresh.back() == ' ')) {
        fresh.pop_back();
      }
      token_ = fresh;
    } else {
      logging::Warn("kube", "cannot re-read token file; using the previous token",
                    {{"file", config_.token_file}});
    }
    token_loaded_ = true;
    token_read_ = now;
  }
  return token_.empty() ? config_.token : token_;
}

// The curl_slists of one exchange, freed with it.
struct HttpTransport::Lists {
  curl_slist* headers = nullptr;
  curl_slist* connect_to = nullptr;
  std::string content_type_header;  // the slists copy their strings; kept for clarity of lifetime
  std::string auth_header;
  ~Lists() {
    curl_slist_free_all(headers);
    curl_slist_free_all(connect_to);
  }
};

HttpResult HttpTransport::Perform(const HttpRequest& request) {
  HttpResult result;
  CURL* curl = static_cast<CURL*>(AcquireHandle());
  if (curl == nullptr) {
    result.transport = Status::Transport("curl_easy_init failed");
    return result;
  }
  curl_easy_reset(curl);  // keeps the connection cache, forgets the previous options
  Transfer transfer{&request, curl, &result};
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  {
    Lists lists;
    SetTarget(curl, request, &lists);
    SetTransfer(curl, request, &transfer);
    SetTls(curl);
    SetHeadersAndMethod(curl, request, &lists);
    CURLcode rc = curl_easy_perform(curl);
    ReadOutcome(curl, rc, error_buffer, request, &transfer, &result);
  }
  // A handle whose transfer failed may hold a half-read connection; curl closes those itself,
  // so the handle is safe to reuse.
  ReleaseHandle(curl);
  return result;
}

void HttpTransport::SetTarget(void* handle, const HttpRequest& request, Lists* lists) {
  CURL* curl = static_cast<CURL*>(handle);
  // Checking the certificate for another name than the URL's host: the URL carries that name
  // (TLS checks and sends it), CURLOPT_CONNECT_TO the real address.
  if (tls_route_ && request.url.compare(0, config_.server.size(), config_.server) == 0) {
    const std::string routed_url = tls_route_->server + request.url.substr(config_.server.size());
    lists->connect_to = curl_slist_append(nullptr, tls_route_->connect_to.c_str());
    curl_easy_setopt(curl, CURLOPT_CONNECT_TO, lists->connect_to);
    curl_easy_setopt(curl, CURLOPT_URL, routed_url.c_str());  // curl copies the URL
  } else {
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  }
}

void HttpTransport::SetTransfer(void* handle, const HttpRequest& request, void* transfer) {
  CURL* curl = static_cast<CURL*>(handle);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, 15L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnWrite);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, transfer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, transfer);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, transfer);
  if (request.streaming) {
    // No overall timeout: a watch lives for minutes. A stream that stays silent longer than
    // the server's own timeout plus slack is dead.
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(request.low_speed_time.count()));
  } else {
    const auto timeout = request.timeout.count() > 0 ? request.timeout : options_.request_timeout;
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<std::int64_t>(1, timeout.count())));
  }
}

// TLS: the cluster CA, optional client certificate, or (only when allowed) no checks.
void HttpTransport::SetTls(void* handle) {
  CURL* curl = static_cast<CURL*>(handle);
  if (!config_.ca_data.empty()) SetBlob(curl, CURLOPT_CAINFO_BLOB, config_.ca_data);
  else if (!config_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, config_.ca_file.c_str());
  if (!config_.client_cert_data.empty()) {
    SetBlob(curl, CURLOPT_SSLCERT_BLOB, config_.client_cert_data);
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!config_.client_cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
  }
  if (!config_.client_key_data.empty()) {
    SetBlob(curl, CURLOPT_SSLKEY_BLOB, config_.client_key_data, tls_is_mbedtls_);
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!config_.client_key_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLKEY, config_.client_key_file.c_str());
  }
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

void HttpTransport::SetHeadersAndMethod(void* handle, const HttpRequest& request, Lists* lists) {
  CURL* curl = static_cast<CURL*>(handle);
  lists->headers = curl_slist_append(lists->headers, "Accept: application/json");
  lists->headers = curl_slist_append(lists->headers, "Expect:");
  if (!request.content_type.empty()) {
    lists->content_type_header = "Content-Type: " + std::string(request.content_type);
    lists->headers = curl_slist_append(lists->headers, lists->content_type_header.c_str());
  }
  if (std::string token = BearerToken(); !token.empty()) {
    lists->auth_header = "Authorization: Bearer " + token;
    lists->headers = curl_slist_append(lists->headers, lists->auth_header.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, lists->headers);

  const std::string method(request.method);
  if (method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    return;
  }
  if (method != "POST") curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());  // curl copies it
  if (method != "DELETE" || !request.body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
  }
}

void HttpTransport::ReadOutcome(void* handle, int code, const char* error_buffer, const HttpRequest& request,
                                const void* transfer_ptr, HttpResult* result) {
  CURL* curl = static_cast<CURL*>(handle);
  const auto rc = static_cast<CURLcode>(code);
  const auto* transfer = static_cast<const Transfer*>(transfer_ptr);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->code);
  if (char* ct = nullptr; curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct) {
    result->content_type = ct;
  }
  curl_off_t retry_after = 0;
  if (curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK) {
    result->retry_after_seconds = static_cast<int>(retry_after);
  }
  if (rc == CURLE_ABORTED_BY_CALLBACK || (rc == CURLE_WRITE_ERROR && transfer->aborted_by_handler)) {
    result->transport = Status::Local("Cancelled", "request cancelled");
  } else if (rc != CURLE_OK) {
    std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(rc);
    if (rc == CURLE_PEER_FAILED_VERIFICATION && tls_route_ && config_.tls_server_name.empty()) {
      detail += " (the certificate was checked for the name " + std::string(kInClusterServerName) +
                ": this TLS library cannot match IP addresses; set tls-server-name in the kubeconfig)";
    }
    result->transport = Status::Transport(std::string(request.method) + " " + request.url + ": " + detail);
    result->code = 0;
  }
}

}  // namespace kube::internal
