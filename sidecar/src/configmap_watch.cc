#include "configmap_watch.h"

#include <string>

#include "id_configmap.h"
#include "logging/log.h"

namespace sidecar {
namespace {

constexpr char kComponent[] = "sidecar.watch";

kube::InformerOptions WatchOptions(const Config& config) {
  kube::InformerOptions options;
  options.namespace_ = config.name_space;
  options.field_selector = "metadata.name=" + config.ConfigMapName();
  options.name = "configmap/" + config.ConfigMapName();
  options.backoff = kube::BackoffPolicy{std::chrono::milliseconds(250), std::chrono::milliseconds(10000), 2.0, 0.5};
  return options;
}

}  // namespace

ConfigMapWatch::ConfigMapWatch(std::shared_ptr<kube::Client> client, const Config& config, IdBoard& board)
    : config_(config), board_(board), informer_(std::move(client), kube::resources::kConfigMaps, WatchOptions(config)) {
  informer_.AddEventHandlers(kube::EventHandlers{
      .on_add = [this](const kube::ObjectPtr& cm) { OnConfigMap(*cm); },
      .on_update = [this](const kube::ObjectPtr&, const kube::ObjectPtr& cm) { OnConfigMap(*cm); },
      // A deleted ConfigMap means the job is going away; the pods follow, nothing to serve.
      .on_delete = {},
  });
}

void ConfigMapWatch::Start(int64_t pod_attempt) {
  pod_attempt_ = pod_attempt;
  logging::Fields fields{{"namespace", config_.name_space}, {"configmap", config_.ConfigMapName()}};
  if (pod_attempt > 0) fields.emplace_back("attempt", std::to_string(pod_attempt));
  logging::Info(kComponent, "watching the id ConfigMap", fields);
  informer_.Start();
}

void ConfigMapWatch::Stop() { informer_.Stop(); }

void ConfigMapWatch::OnConfigMap(const nlohmann::json& config_map) {
  std::string ignored_because;
  std::optional<IdConfigMapView> view = ReadIdConfigMap(config_map, config_.job_uid, &ignored_because);
  if (!view) {
    logging::Debug(kComponent, "ConfigMap has nothing to serve yet", {{"why", ignored_because}});
    return;
  }
  if (!view->problem.empty()) {
    logging::Warn(kComponent, "ignored a malformed id in the ConfigMap",
                  {{"attempt", std::to_string(view->attempt)}, {"problem", view->problem}});
  }
  bool published = view->id.has_value();
  if (view->attempt != last_logged_attempt_ || published != last_logged_published_) {
    logging::Fields fields{{"configmap_attempt", std::to_string(view->attempt)}};
    if (int64_t pod_attempt = pod_attempt_.load(); pod_attempt > 0) {
      fields.emplace_back("pod_attempt", std::to_string(pod_attempt));  // in place: none before it is known
    }
    logging::Info(kComponent, published ? "the ConfigMap holds an id" : "the ConfigMap holds no id yet", fields);
    last_logged_attempt_ = view->attempt;
    last_logged_published_ = published;
  }
  board_.Observe(view->attempt, std::move(view->id), std::move(view->job_uid));
}

}  // namespace sidecar
