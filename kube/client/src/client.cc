#include "kube/client.h"

#include <algorithm>
#include <random>

#include "http.h"
#include "logging/log.h"

namespace kube {

class Client::Impl {
 public:
  Impl(const Config& config, const ClientOptions& options)
      : options_(options), transport_(config, options), base_(config.server) {
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
  }

  internal::HttpTransport& transport() { return transport_; }
  const ClientOptions& options() const { return options_; }
  std::string Url(std::string_view path_and_query) const { return base_ + std::string(path_and_query); }

 private:
  ClientOptions options_;
  internal::HttpTransport transport_;
  std::string base_;
};

namespace {

Result<Json> ParseObject(const Response& response) {
  auto j = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Local("DecodeError", "API server answered with a body that is not JSON: " +
                                            response.body.substr(0, 120));
  }
  return j;
}

Result<Json> ToJson(Result<Response>&& r) {
  if (!r.ok()) return r.status();
  return ParseObject(*r);
}

std::string MetadataName(const Json& object) {
  if (!object.is_object()) return {};
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return {};
  auto name = md->find("name");
  return name != md->end() && name->is_string() ? name->get<std::string>() : std::string();
}

const char* PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge: return "application/merge-patch+json";
    case PatchType::kStrategicMerge: return "application/strategic-merge-patch+json";
    case PatchType::kJson: return "application/json-patch+json";
    case PatchType::kApply: return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

}  // namespace

Client::Client(Config config, ClientOptions options)
    : config_(std::move(config)), impl_(std::make_unique<Impl>(config_, options)) {}

Client::~Client() = default;

Result<Response> Client::Request(std::string_view method, std::string_view path_and_query,
                                 std::string_view body, std::string_view content_type, bool retry) {
  CallOptions call;
  call.retry = retry;
  return Request(method, path_and_query, body, content_type, call);
}

Result<Response> Client::Request(std::string_view method, std::string_view path_and_query, std::string_view body,
                                 std::string_view content_type, const CallOptions& call) {
  using Clock = std::chrono::steady_clock;
  const ClientOptions& opts = impl_->options();
  Backoff backoff(opts.backoff);
  bool token_refreshed = false;
  const int attempts = call.retry ? std::max(1, opts.max_attempts) : 1;
  const bool has_deadline = call.timeout.count() > 0;
  const auto deadline = Clock::now() + call.timeout;
  auto left = [&] { return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()); };
  auto timed_out = [&] {
    const std::string limit = call.deadline_name.empty()
                                  ? "within " + std::to_string(call.timeout.count()) + " ms"
                                  : "before " + call.deadline_name;
    return Status::Local("Timeout", std::string(method) + " " +
                                        std::string(path_and_query.substr(0, path_and_query.find('?'))) +
                                        " did not finish " + limit);
  };
  auto cancelled = [] { return Status::Local("Cancelled", "request cancelled"); };
  for (int attempt = 1;; ++attempt) {
    if (call.stop.stop_requested()) return cancelled();
    if (has_deadline && left().count() <= 0) return timed_out();
    internal::HttpRequest request;
    request.method = method;
    request.url = impl_->Url(path_and_query);
    request.body = body;
    request.content_type = content_type;
    request.stop = call.stop;
    const bool deadline_binds = has_deadline && left() <= opts.request_timeout;
    if (has_deadline) request.timeout = std::min(left(), opts.request_timeout);
    const auto sent = Clock::now();
    internal::HttpResult http = impl_->transport().Perform(request);
    if (opts.on_response) {
      opts.on_response(method, http.transport.ok() ? http.code : 0,
                       std::chrono::duration<double>(Clock::now() - sent).count());
    }
    if (call.warnings != nullptr) {  // a retry's answer says the same: each text once
      for (const std::string& text : http.warnings) {
        if (std::find(call.warnings->begin(), call.warnings->end(), text) == call.warnings->end()) {
          call.warnings->push_back(text);
        }
      }
    }

    Status status;
    if (!http.transport.ok()) {
      if (call.stop.stop_requested()) return cancelled();
      // curl's timer may fire a few ms before ours (both round): a transport error at the
      // deadline is the deadline.
      if (deadline_binds && left() < std::chrono::milliseconds(50)) return timed_out();
      status = http.transport;
    } else if (http.code >= 200 && http.code < 300) {
      return Response{http.code, std::move(http.body), std::move(http.content_type), std::move(http.warnings)};
    } else {
      status = Status::FromResponse(http.code, http.body);
      if (http.retry_after_seconds > 0) status.set_retry_after_seconds(http.retry_after_seconds);
    }
    // A rotated service-account token shows up as 401: re-read the file once and retry.
    if (status.IsUnauthorized() && !token_refreshed && !config_.token_file.empty()) {
      token_refreshed = true;
      impl_->transport().InvalidateToken();
      continue;
    }
    if (!status.IsRetryable() || attempt >= attempts) return status;
    auto delay = backoff.Next();
    if (status.retry_after_seconds() > 0) {
      delay = std::min(std::max(delay, std::chrono::milliseconds(status.retry_after_seconds() * 1000)),
                       opts.backoff.max);
    }
    // A wait that would end past the deadline is pointless: report the last error now.
    if (has_deadline && delay >= left()) return status;
    logging::Warn("kube", "request failed; retrying",
                  {{"method", std::string(method)},
                   {"path", std::string(path_and_query.substr(0, path_and_query.find('?')))},
                   {"error", status.ToString()},
                   {"attempt", std::to_string(attempt)},
                   {"retry_in_ms", std::to_string(delay.count())}});
    if (!SleepFor(delay, call.stop)) return cancelled();
  }
}

Result<Json> Client::Get(const Resource& r, std::string_view ns, std::string_view name) {
  return ToJson(Request("GET", ObjectPath(r, ns, name)));
}

Result<ListResult> Client::List(const Resource& r, std::string_view ns, const ListOptions& options) {
  ListResult out;
  std::string continue_token;
  for (;;) {
    QueryParams q;
    if (!options.label_selector.empty()) q.emplace_back("labelSelector", options.label_selector);
    if (!options.field_selector.empty()) q.emplace_back("fieldSelector", options.field_selector);
    if (options.page_size > 0) q.emplace_back("limit", std::to_string(options.page_size));
    if (!continue_token.empty()) {
      q.emplace_back("continue", continue_token);
    } else if (!options.resource_version.empty()) {
      q.emplace_back("resourceVersion", options.resource_version);
    }
    auto page = ToJson(Request("GET", CollectionPath(r, ns) + QueryString(q)));
    if (!page.ok()) return page.status();
    Json& list = *page;
    // List items carry no kind/apiVersion; restore them so handlers see whole objects.
    std::string kind;
    if (auto k = list.find("kind"); k != list.end() && k->is_string()) {
      kind = k->get<std::string>();
      if (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0) kind.resize(kind.size() - 4);
    }
    if (auto items = list.find("items"); items != list.end() && items->is_array()) {
      out.items.reserve(out.items.size() + items->size());
      for (auto& item : *items) {
        if (item.is_object()) {
          if (!kind.empty() && !item.contains("kind")) item["kind"] = kind;
          if (!item.contains("apiVersion")) item["apiVersion"] = r.ApiVersion();
        }
        if (options.item_transform) options.item_transform(item);
        out.items.push_back(std::move(item));
      }
    }
    const Json& md = list.contains("metadata") ? list["metadata"] : Json::object();
    if (md.contains("resourceVersion") && md["resourceVersion"].is_string()) {
      out.resource_version = md["resourceVersion"].get<std::string>();
    }
    continue_token = md.contains("continue") && md["continue"].is_string() ? md["continue"].get<std::string>() : "";
    if (continue_token.empty()) return out;
  }
}

Result<Json> Client::Create(const Resource& r, std::string_view ns, const Json& object) {
  return ToJson(Request("POST", CollectionPath(r, ns), object.dump(), "application/json"));
}

Result<Json> Client::Create(const Resource& r, std::string_view ns, const Json& object, const CallOptions& call) {
  return ToJson(Request("POST", CollectionPath(r, ns), object.dump(), "application/json", call));
}

Result<Json> Client::Update(const Resource& r, std::string_view ns, const Json& object) {
  std::string name = MetadataName(object);
  if (name.empty()) return Status::Local("InvalidArgument", "Update: object has no metadata.name");
  return ToJson(Request("PUT", ObjectPath(r, ns, name), object.dump(), "application/json"));
}

Result<Json> Client::UpdateStatus(const Resource& r, std::string_view ns, const Json& object) {
  std::string name = MetadataName(object);
  if (name.empty()) return Status::Local("InvalidArgument", "UpdateStatus: object has no metadata.name");
  return ToJson(Request("PUT", ObjectPath(r, ns, name, "status"), object.dump(), "application/json"));
}

Result<Json> Client::Patch(const Resource& r, std::string_view ns, std::string_view name, PatchType type,
                           const Json& patch, const PatchOptions& options) {
  QueryParams q;
  if (type == PatchType::kApply && options.field_manager.empty()) {
    return Status::Local("InvalidArgument", "server-side apply needs a field manager");
  }
  if (!options.field_manager.empty()) q.emplace_back("fieldManager", options.field_manager);
  if (type == PatchType::kApply && options.force) q.emplace_back("force", "true");
  return ToJson(Request("PATCH", ObjectPath(r, ns, name, options.subresource) + QueryString(q), patch.dump(),
                        PatchContentType(type)));
}

Result<Json> Client::Apply(const Resource& r, std::string_view ns, const Json& object,
                           std::string_view field_manager, bool force) {
  std::string name = MetadataName(object);
  if (name.empty()) return Status::Local("InvalidArgument", "Apply: object has no metadata.name");
  PatchOptions options;
  options.field_manager = std::string(field_manager);
  options.force = force;
  return Patch(r, ns, name, PatchType::kApply, object, options);
}

Status Client::Delete(const Resource& r, std::string_view ns, std::string_view name,
                      const DeleteOptions& options) {
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (options.propagation_policy) body["propagationPolicy"] = *options.propagation_policy;
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  if (options.precondition_uid) body["preconditions"]["uid"] = *options.precondition_uid;
  if (options.precondition_resource_version) {
    body["preconditions"]["resourceVersion"] = *options.precondition_resource_version;
  }
  auto r2 = Request("DELETE", ObjectPath(r, ns, name), body.dump(), "application/json");
  return r2.ok() ? Status::Ok() : r2.status();
}

Result<Json> Client::ServerVersion() { return ToJson(Request("GET", "/version")); }

Status Client::Watch(const Resource& r, std::string_view ns, const WatchOptions& options,
                     const EventHandler& on_event, std::stop_token stop,
                     const DecodeErrorHandler& on_decode_error) {
  QueryParams q{{"watch", "true"}};
  if (!options.label_selector.empty()) q.emplace_back("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) q.emplace_back("fieldSelector", options.field_selector);
  if (!options.resource_version.empty()) q.emplace_back("resourceVersion", options.resource_version);
  if (options.allow_bookmarks) q.emplace_back("allowWatchBookmarks", "true");
  if (options.timeout_seconds > 0) q.emplace_back("timeoutSeconds", std::to_string(options.timeout_seconds));

  std::vector<MemberPath> drop;
  for (const std::string& field : options.drop_fields) drop.push_back(ParseMemberPath(field));
  WatchDecoder decoder(WatchDecoder::kDefaultMaxLineBytes, std::move(drop));
  Status ended;           // set by an ERROR event
  bool handler_stopped = false;
  auto sink = [&](Result<WatchEvent>&& event) {
    if (!ended.ok() || handler_stopped) return;
    if (!event.ok()) {
      if (on_decode_error) on_decode_error(event.status());
      return;
    }
    if (event->type == EventType::kError) {
      ended = event->ErrorStatus();
      return;
    }
    if (!on_event(std::move(*event))) handler_stopped = true;
  };

  internal::HttpRequest request;
  request.method = "GET";
  request.url = impl_->Url(CollectionPath(r, ns) + QueryString(q));
  request.streaming = true;
  request.low_speed_time = std::chrono::seconds(std::max(options.timeout_seconds, 0) + 30);
  request.stop = stop;
  request.on_data = [&](std::string_view chunk) {
    decoder.Feed(chunk, sink);
    return ended.ok() && !handler_stopped;
  };
  internal::HttpResult http = impl_->transport().Perform(request);
  if (!ended.ok()) return ended;
  if (handler_stopped || stop.stop_requested()) return Status::Local("Cancelled", "watch cancelled");
  if (!http.transport.ok()) return http.transport;
  if (http.code < 200 || http.code >= 300) {
    if (http.code == 401 && !config_.token_file.empty()) impl_->transport().InvalidateToken();
    return Status::FromResponse(http.code, http.body);
  }
  return Status::Ok();
}

}  // namespace kube
