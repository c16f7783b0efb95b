// A thread-safe Kubernetes API client over libcurl: typed-by-Resource calls on JSON objects,
// retries with backoff for transient failures, and streaming watches.
//
//   auto config = kube::Load(flag_kubeconfig);
//   if (!config.ok()) { ... config.status().ToString() ... }
//   auto client = std::make_shared<kube::Client>(*config, kube::ClientOptions{.user_agent = "x/0.1"});
//   auto cm = client->Get(kube::resources::kConfigMaps, "default", "demo-nccl");
//   if (cm.status().IsNotFound()) ...
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/backoff.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "kube/status.h"
#include "kube/watch.h"

namespace kube {

using Json = nlohmann::json;

struct ClientOptions {
  std::string user_agent = "ncclop-kube/0.1";
  // Retries for transport errors, 429 and 5xx (never other 4xx). Retry-After is honoured
  // (capped by backoff.max). max_attempts counts the first try.
  int max_attempts = 5;
  BackoffPolicy backoff{std::chrono::milliseconds(200), std::chrono::milliseconds(10000), 2.0, 0.5};
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds request_timeout{60000};  // non-watch requests only
  // Called once per HTTP attempt of a non-watch request (retries count again) with the method,
  // the status code (0 when no response came: a transport error) and how long the attempt
  // took, in seconds. For metrics.
  std::function<void(std::string_view method, int code, double seconds)> on_response;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::int64_t page_size = 500;  // List fetches every page (limit/continue) and joins them
  std::string resource_version;  // "" = most recent (quorum read)
  // Applied to each item as its page arrives, so a large list never holds every item whole.
  std::function<void(Json& item)> item_transform;
};

struct ListResult {
  std::vector<Json> items;
  std::string resource_version;  // the list's metadata.resourceVersion: watch from here
};

enum class PatchType {
  kMerge,           // application/merge-patch+json
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in types only)
  kJson,            // application/json-patch+json (an array of operations)
  kApply,           // application/apply-patch+yaml (server-side apply; JSON is YAML)
};

struct PatchOptions {
  std::string field_manager;  // required for kApply
  bool force = false;         // kApply: take ownership of conflicting fields
  std::string subresource;    // e.g. "status"
};

struct DeleteOptions {
  std::optional<std::string> propagation_policy;  // "Foreground", "Background", "Orphan"
  std::optional<std::int64_t> grace_period_seconds;
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // start after this version ("" = from now, no initial state)
  bool allow_bookmarks = true;
  // The server ends the watch after this long (the caller then rewatches from the last
  // resourceVersion). The stream has no overall client timeout; it is considered dead when
  // no byte arrives for timeout_seconds + 30 s.
  int timeout_seconds = 300;
  // Members of each event's object skipped before parsing, as dotted paths from the object
  // ("spec", "metadata.managedFields"): a watcher that never reads them does not pay for them.
  std::vector<std::string> drop_fields;
};

// Per-call limits, for callers that must not block past a deadline of their own (leader
// election must give up a renewal before renew_deadline).
struct CallOptions {
  // Whole call, retries and their waits included (0 = ClientOptions::request_timeout per try,
  // no overall limit). Each try gets at most what is left; past it the call returns a Status
  // with reason "Timeout".
  std::chrono::milliseconds timeout{0};
  // When `timeout` is what is left of a deadline of the caller's, that deadline's name for the
  // Timeout message ("the lease's renew deadline ..."): the message then says the call did not
  // finish before it, not "within" a remainder that may be 1 ms.
  std::string deadline_name;
  // Cancels the request in flight and any retry wait (reason "Cancelled").
  std::stop_token stop;
  bool retry = true;
  // When set, receives the API server's warnings on the call (its Warning headers' texts:
  // a deprecated field, an unknown field dropped, an admission policy's words), each once,
  // whether the call succeeds or fails.
  std::vector<std::string>* warnings = nullptr;
};

struct Response {
  long code = 0;
  std::string body;
  std::string content_type;
  std::vector<std::string> warnings;  // the answer's Warning headers' texts (kube/warning.h)
};

class Client {
 public:
  explicit Client(Config config, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Config& config() const { return config_; }

  Result<Json> Get(const Resource& r, std::string_view ns, std::string_view name);
  Result<ListResult> List(const Resource& r, std::string_view ns, const ListOptions& options = {});
  Result<Json> Create(const Resource& r, std::string_view ns, const Json& object);
  // The same with per-call options (CallOptions::warnings: what the API server warned of).
  Result<Json> Create(const Resource& r, std::string_view ns, const Json& object, const CallOptions& call);
  // Replaces the object named by object.metadata.name; object.metadata.resourceVersion makes
  // it conditional (a stale one gives IsConflict()).
  Result<Json> Update(const Resource& r, std::string_view ns, const Json& object);
  Result<Json> UpdateStatus(const Resource& r, std::string_view ns, const Json& object);
  Result<Json> Patch(const Resource& r, std::string_view ns, std::string_view name, PatchType type,
                     const Json& patch, const PatchOptions& options = {});
  // Server-side apply: Patch(kApply) with the object's own name.
  Result<Json> Apply(const Resource& r, std::string_view ns, const Json& object,
                     std::string_view field_manager, bool force = false);
  Status Delete(const Resource& r, std::string_view ns, std::string_view name,
                const DeleteOptions& options = {});

  // Streams events to on_event until: the server ends the watch (returns OK; rewatch from
  // the last resourceVersion), on_event returns false or `stop` is requested (returns
  // Status reason "Cancelled"), the server sends an ERROR event or an HTTP error (returns it;
  // IsGone() means relist), or the connection breaks (transport error). Not retried here.
  // A line that fails to decode is passed to on_decode_error (if set) and skipped.
  using EventHandler = std::function<bool(WatchEvent&& event)>;
  using DecodeErrorHandler = std::function<void(const Status& error)>;
  Status Watch(const Resource& r, std::string_view ns, const WatchOptions& options,
               const EventHandler& on_event, std::stop_token stop = {},
               const DecodeErrorHandler& on_decode_error = {});

  // GET /version: {"major","minor","gitVersion",...}.
  Result<Json> ServerVersion();

  // Any request: path with query ("/apis/..."), body sent as is. Retried like the others when
  // `retry` is true. HTTP errors come back as a Status (FromResponse), 2xx as the Response.
  Result<Response> Request(std::string_view method, std::string_view path_and_query,
                           std::string_view body = {}, std::string_view content_type = {},
                           bool retry = true);
  Result<Response> Request(std::string_view method, std::string_view path_and_query, std::string_view body,
                           std::string_view content_type, const CallOptions& call);

 private:
  class Impl;
  Config config_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kube
