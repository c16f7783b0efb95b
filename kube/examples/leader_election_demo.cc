// A tiny program that takes part in leader election and prints what happens, for the
// integration test (two of these race for one Lease) and for trying the library by hand.
//
//   kube_leader_election_demo --kubeconfig K --namespace NS --lease NAME --identity ID
//       [--lease-duration-ms 15000] [--renew-deadline-ms 10000] [--retry-period-ms 2000]
//
// Prints "LEADING <id>" when it becomes leader and "STOPPED <id>" when leading ends; SIGTERM
// or SIGINT releases the lease and exits 0.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/leader_election.h"

namespace {

volatile std::sig_atomic_t g_signalled = 0;

void OnSignal(int) { g_signalled = 1; }

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --kubeconfig K --namespace NS --lease NAME --identity ID "
               "[--lease-duration-ms N] [--renew-deadline-ms N] [--retry-period-ms N]\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig;
  kube::LeaderElectionConfig config;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) return Usage(argv[0]);
    std::string value = argv[++i];
    if (flag == "--kubeconfig") kubeconfig = value;
    else if (flag == "--namespace") config.lease_namespace = value;
    else if (flag == "--lease") config.lease_name = value;
    else if (flag == "--identity") config.identity = value;
    else if (flag == "--lease-duration-ms") config.lease_duration = std::chrono::milliseconds(std::atol(value.c_str()));
    else if (flag == "--renew-deadline-ms") config.renew_deadline = std::chrono::milliseconds(std::atol(value.c_str()));
    else if (flag == "--retry-period-ms") config.retry_period = std::chrono::milliseconds(std::atol(value.c_str()));
    else return Usage(argv[0]);
  }
  if (config.lease_namespace.empty() || config.lease_name.empty() || config.identity.empty()) return Usage(argv[0]);

  auto loaded = kube::Load(kubeconfig);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
    return 1;
  }
  auto client = std::make_shared<kube::Client>(*loaded, kube::ClientOptions{.user_agent = "kube-leader-demo/0.1"});
  const std::string id = config.identity;
  config.on_started_leading = [id] { std::printf("LEADING %s\n", id.c_str()); std::fflush(stdout); };
  config.on_stopped_leading = [id] { std::printf("STOPPED %s\n", id.c_str()); std::fflush(stdout); };
  config.on_new_leader = [](const std::string& leader) { std::printf("LEADER %s\n", leader.c_str()); std::fflush(stdout); };

  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  // request_stop() runs stop callbacks (mutexes), so it is called from a thread, not the handler.
  std::stop_source stop;
  std::jthread watcher([&stop](std::stop_token self) {
    while (!self.stop_requested() && g_signalled == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop.request_stop();
  });
  kube::LeaderElector elector(client, config);
  kube::Status s = elector.Run(stop.get_token());
  watcher.request_stop();
  if (!s.ok()) {
    std::fprintf(stderr, "leader election ended: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
