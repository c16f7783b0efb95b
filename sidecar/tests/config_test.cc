#include "config.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "contract/env.h"
#include "contract/release_version.h"

namespace sidecar {
namespace {

using Env = std::map<std::string, std::string>;

Env PodEnv() {
  return {{"NCCLJOB_NAME", "demo"},      {"NCCLJOB_NAMESPACE", "team"}, {"NCCLJOB_UID", "u-1"},
          {"NCCLJOB_INDEX", "1"},        {"NCCLJOB_REPLICAS", "2"},     {"NCCLJOB_GPUS_PER_POD", "8"},
          {"NCCLJOB_WORLD_SIZE", "16"},  {"NCCLJOB_ATTEMPT", "3"},      {"NCCLJOB_POD_NAME", "demo-1"}};
}

std::variant<Config, ShowHelp, ShowVersion, ConfigError> Parse(const std::vector<std::string>& args, const Env& env) {
  return ParseConfig(args, [&env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

std::string ErrorOf(const std::variant<Config, ShowHelp, ShowVersion, ConfigError>& r) {
  auto* e = std::get_if<ConfigError>(&r);
  return e ? e->message : "";
}

TEST(ParseConfig, ReadsThePodEnvAndDefaults) {
  auto r = Parse({}, PodEnv());
  ASSERT_TRUE(std::holds_alternative<Config>(r)) << ErrorOf(r);
  const Config& c = std::get<Config>(r);
  EXPECT_EQ(c.job, "demo");
  EXPECT_EQ(c.ConfigMapName(), "demo-nccl");
  EXPECT_EQ(c.name_space, "team");
  EXPECT_EQ(c.index, 1);
  EXPECT_FALSE(c.root());
  EXPECT_EQ(c.world_size, 16);
  EXPECT_EQ(c.attempt, 3);
  EXPECT_EQ(c.listen.host, "127.0.0.1");
  EXPECT_EQ(c.listen.port, 8471);
  EXPECT_EQ(c.probe_listen.host, "0.0.0.0");
  EXPECT_EQ(c.probe_listen.port, 8472);
  EXPECT_FALSE(c.standalone);
}

TEST(ParseConfig, ReadsFlagsInBothSpellings) {
  auto r = Parse({"--listen", "127.0.0.1:0", "--probe-listen=127.0.0.1:9", "--kubeconfig", "/k",
                  "--log-format=json", "--log-level", "debug"},
                 PodEnv());
  ASSERT_TRUE(std::holds_alternative<Config>(r)) << ErrorOf(r);
  const Config& c = std::get<Config>(r);
  EXPECT_EQ(c.listen.port, 0);
  EXPECT_EQ(c.probe_listen.port, 9);
  EXPECT_EQ(c.kubeconfig, "/k");
  EXPECT_EQ(c.log_format, logging::Format::kJson);
  EXPECT_EQ(c.log_level, logging::Level::kDebug);
}

TEST(ParseConfig, HelpWinsOverEverything) {
  EXPECT_TRUE(std::holds_alternative<ShowHelp>(Parse({"--help"}, {})));
  EXPECT_NE(HelpText().find("NCCLJOB_ATTEMPT"), std::string::npos);
  EXPECT_NE(HelpText().find("--peer-url"), std::string::npos);
}

TEST(ParseConfig, VersionNeedsNoPodEnv) {
  EXPECT_TRUE(std::holds_alternative<ShowVersion>(Parse({"--version"}, {})));
  EXPECT_EQ(VersionText(), "nccl-sidecar " + std::string(contract::kReleaseVersion) + "\n");
}

TEST(ParseConfig, MissingVariableIsNamed) {
  for (const char* name : {"NCCLJOB_NAME", "NCCLJOB_INDEX", "NCCLJOB_REPLICAS", "NCCLJOB_ATTEMPT"}) {
    Env env = PodEnv();
    env.erase(name);
    EXPECT_NE(ErrorOf(Parse({}, env)).find(name), std::string::npos) << name;
  }
}

// The operator no longer injects NCCLJOB_NAMESPACE into the sidecar: the client's namespace (in
// a pod, the service account's) fills it; a value from the env (older pods) wins.
TEST(ParseConfig, TheNamespaceDefaultsToTheClients) {
  Env env = PodEnv();
  env.erase("NCCLJOB_NAMESPACE");
  auto parsed = Parse({}, env);
  ASSERT_TRUE(std::holds_alternative<Config>(parsed)) << ErrorOf(parsed);
  Config c = std::get<Config>(parsed);
  EXPECT_EQ(c.name_space, "");
  EXPECT_FALSE(UseClientNamespace(&c, "pods-ns").has_value());
  EXPECT_EQ(c.name_space, "pods-ns");

  Config old = std::get<Config>(Parse({}, PodEnv()));
  EXPECT_FALSE(UseClientNamespace(&old, "pods-ns").has_value());
  EXPECT_EQ(old.name_space, "team");

  Config none = std::get<Config>(parsed);
  auto error = UseClientNamespace(&none, "");
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("NCCLJOB_NAMESPACE"), std::string::npos);
}

// What the operator injects into the sidecar now (contract::env::kSidecarEnv) is enough.
TEST(ParseConfig, TheOperatorsSidecarEnvIsEnough) {
  Env full = PodEnv();
  Env lean;
  for (const char* name : contract::env::kSidecarEnv) {
    if (full.count(name)) lean[name] = full[name];
  }
  auto parsed = Parse({}, lean);
  ASSERT_TRUE(std::holds_alternative<Config>(parsed)) << ErrorOf(parsed);
  Config c = std::get<Config>(parsed);
  EXPECT_EQ(c.pod_name, "demo-" + std::to_string(c.index));
  EXPECT_EQ(c.world_size, c.replicas * std::max(c.gpus_per_pod, 1));
}

TEST(ParseConfig, MalformedVariableIsNamed) {
  for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"NCCLJOB_INDEX", "x"}, {"NCCLJOB_INDEX", "-1"}, {"NCCLJOB_REPLICAS", "0"},
           {"NCCLJOB_ATTEMPT", "0"}, {"NCCLJOB_ATTEMPT", "1a"}, {"NCCLJOB_GPUS_PER_POD", "-2"},
           {"NCCLJOB_WORLD_SIZE", "15"}, {"NCCLJOB_INDEX", "2"}}) {
    Env env = PodEnv();
    env[name] = value;
    EXPECT_NE(ErrorOf(Parse({}, env)).find(name), std::string::npos) << name << "=" << value;
  }
}

TEST(ParseConfig, OptionalVariablesHaveDefaults) {
  Env env = PodEnv();
  env.erase("NCCLJOB_GPUS_PER_POD");
  env.erase("NCCLJOB_WORLD_SIZE");
  env.erase("NCCLJOB_POD_NAME");
  env.erase("NCCLJOB_UID");
  auto r = Parse({}, env);
  ASSERT_TRUE(std::holds_alternative<Config>(r)) << ErrorOf(r);
  EXPECT_EQ(std::get<Config>(r).gpus_per_pod, 1);
  EXPECT_EQ(std::get<Config>(r).world_size, 2);
  EXPECT_EQ(std::get<Config>(r).pod_name, "demo-1");
}

TEST(ParseConfig, CpuOnlyPodsCountOneRankEach) {
  Env env = PodEnv();
  env["NCCLJOB_GPUS_PER_POD"] = "0";
  env["NCCLJOB_WORLD_SIZE"] = "2";
  EXPECT_TRUE(std::holds_alternative<Config>(Parse({}, env)));
}

TEST(ParseConfig, BootstrapRootsPickTheRootPods) {
  Env env = PodEnv();
  env["NCCLJOB_REPLICAS"] = "4";
  env["NCCLJOB_WORLD_SIZE"] = "32";
  auto r = Parse({}, env);
  ASSERT_TRUE(std::holds_alternative<Config>(r)) << ErrorOf(r);
  EXPECT_EQ(std::get<Config>(r).bootstrap_roots, 1);
  EXPECT_FALSE(std::get<Config>(r).root());
  env["NCCLJOB_BOOTSTRAP_ROOTS"] = "4";
  r = Parse({}, env);
  ASSERT_TRUE(std::holds_alternative<Config>(r)) << ErrorOf(r);
  EXPECT_EQ(std::get<Config>(r).root_slot(), 1);  // pods 0,1,2,3 are roots 0..3
  env["NCCLJOB_BOOTSTRAP_ROOTS"] = "2";
  EXPECT_FALSE(std::get<Config>(Parse({}, env)).root());  // pods 0 and 2
  env["NCCLJOB_BOOTSTRAP_ROOTS"] = "5";
  EXPECT_NE(ErrorOf(Parse({}, env)).find("more than NCCLJOB_REPLICAS=4"), std::string::npos);
  env["NCCLJOB_BOOTSTRAP_ROOTS"] = "0";
  EXPECT_NE(ErrorOf(Parse({}, env)).find("NCCLJOB_BOOTSTRAP_ROOTS"), std::string::npos);
  env["NCCLJOB_BOOTSTRAP_ROOTS"] = "2";
  EXPECT_NE(ErrorOf(Parse({"--standalone", "--peer-url", "http://127.0.0.1:1"}, env)).find("needs --root-urls"),
            std::string::npos);
  auto standalone = Parse({"--standalone", "--root-urls", "http://127.0.0.1:1,http://127.0.0.1:2"}, env);
  ASSERT_TRUE(std::holds_alternative<Config>(standalone)) << ErrorOf(standalone);
  EXPECT_EQ(std::get<Config>(standalone).root_urls, (std::vector<std::string>{"http://127.0.0.1:1", "http://127.0.0.1:2"}));
  EXPECT_NE(ErrorOf(Parse({"--standalone", "--root-urls", "http://127.0.0.1:1"}, env)).find("2 of them"), std::string::npos);
  EXPECT_NE(ErrorOf(Parse({"--root-urls", "http://127.0.0.1:1,http://127.0.0.1:2"}, env)).find("only applies with --standalone"),
            std::string::npos);
}

TEST(ParseConfig, StandaloneRules) {
  Env worker = PodEnv();
  worker.erase("NCCLJOB_NAMESPACE");
  EXPECT_NE(ErrorOf(Parse({"--standalone"}, worker)).find("--peer-url"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<Config>(Parse({"--standalone", "--peer-url", "http://127.0.0.1:1"}, worker)));
  EXPECT_NE(ErrorOf(Parse({"--peer-url", "http://127.0.0.1:1"}, PodEnv())).find("--standalone"), std::string::npos);
  EXPECT_NE(ErrorOf(Parse({"--standalone", "--peer-url", "127.0.0.1:1"}, worker)).find("http://"), std::string::npos);
  Env root = worker;
  root["NCCLJOB_INDEX"] = "0";
  EXPECT_TRUE(std::holds_alternative<Config>(Parse({"--standalone"}, root)));
  EXPECT_FALSE(ErrorOf(Parse({"--standalone", "--peer-url", "http://127.0.0.1:1"}, root)).empty());
}

TEST(ParseConfig, InPlaceStateIsForKubernetesMode) {
  auto r = Parse({"--in-place-state=/var/run/nccl-sidecar"}, PodEnv());
  ASSERT_TRUE(std::holds_alternative<Config>(r)) << ErrorOf(r);
  EXPECT_EQ(std::get<Config>(r).in_place_state, contract::kSidecarStateDir);
  EXPECT_TRUE(std::get<Config>(Parse({}, PodEnv())).in_place_state.empty());
  Env root = PodEnv();
  root["NCCLJOB_INDEX"] = "0";
  std::string refused = ErrorOf(Parse({"--standalone", "--in-place-state", "/tmp/x"}, root));
  EXPECT_NE(refused.find("--in-place-state is for Kubernetes mode"), std::string::npos) << refused;
  EXPECT_NE(HelpText().find("--in-place-state=DIR"), std::string::npos);
  EXPECT_NE(HelpText().find("exits " + std::to_string(contract::kSidecarExitAttemptOver)), std::string::npos);
}

TEST(ParseConfig, BadFlagsAreNamed) {
  EXPECT_NE(ErrorOf(Parse({"--listen", "nope"}, PodEnv())).find("--listen"), std::string::npos);
  EXPECT_NE(ErrorOf(Parse({"--listen", "h:70000"}, PodEnv())).find("--listen"), std::string::npos);
  EXPECT_NE(ErrorOf(Parse({"--log-format", "xml"}, PodEnv())).find("--log-format"), std::string::npos);
  EXPECT_NE(ErrorOf(Parse({"--log-level", "loud"}, PodEnv())).find("--log-level"), std::string::npos);
  EXPECT_NE(ErrorOf(Parse({"--bogus"}, PodEnv())).find("--bogus"), std::string::npos);
  EXPECT_NE(ErrorOf(Parse({"--kubeconfig"}, PodEnv())).find("--kubeconfig"), std::string::npos);
}

TEST(ParseHostPort, SplitsAtTheLastColon) {
  auto hp = ParseHostPort("[::1]:8471");
  ASSERT_TRUE(hp);
  EXPECT_EQ(hp->host, "[::1]");
  EXPECT_EQ(hp->port, 8471);
  EXPECT_FALSE(ParseHostPort(":80"));
  EXPECT_FALSE(ParseHostPort("host:"));
}

}  // namespace
}  // namespace sidecar
