#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "kube/config.h"

namespace kube {
namespace {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kube_config_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  fs::path dir_;
};

// The shape kubectl writes: lists at the key's indent, quoted values, comments.
constexpr const char* kKubectlStyle = R"(apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Q0EgUEVN   # "CA PEM"
    server: https://127.0.0.1:6443
  name: local
- cluster:
    server: "https://[::1]:7443"
    certificate-authority: certs/ca.crt
  name: other
contexts:
- context:
    cluster: local
    user: admin
    namespace: team-a
  name: admin@local
- context:
    cluster: other
    user: 'robot''s'
  name: robot@other
current-context: admin@local
kind: Config
preferences: {}
users:
- name: admin
  user:
    token: abc.def
- name: robot's
  user:
    tokenFile: tokens/robot
)";

TEST_F(ConfigTest, TokenAndCaDataFromCurrentContext) {
  auto c = ParseKubeconfig(kKubectlStyle, Write("config", ""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_data, "CA PEM");
  EXPECT_EQ(c->token, "abc.def");
  EXPECT_EQ(c->default_namespace, "team-a");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
}

TEST_F(ConfigTest, NamedContextWithTokenFileAndRelativeCaFile) {
  Write("certs/ca.crt", "pem");
  Write("tokens/robot", "tok\n");
  std::string path = Write("config", kKubectlStyle);
  auto c = LoadKubeconfigFile(path, LoadOptions{"robot@other", false});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://[::1]:7443");
  EXPECT_EQ(c->ca_file, (dir_ / "certs/ca.crt").string());
  EXPECT_EQ(c->token_file, (dir_ / "tokens/robot").string());
  EXPECT_EQ(c->default_namespace, "default");
}

TEST_F(ConfigTest, MissingCaFileNamesTheFileAndTheField) {
  std::string path = Write("config", kKubectlStyle);
  Write("tokens/robot", "tok");
  auto c = LoadKubeconfigFile(path, LoadOptions{"robot@other", false});
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_NE(m.find(path), std::string::npos) << m;
  EXPECT_NE(m.find("clusters[other].cluster.certificate-authority"), std::string::npos) << m;
  EXPECT_NE(m.find((dir_ / "certs/ca.crt").string()), std::string::npos) << m;
}

TEST_F(ConfigTest, ClientCertificateData) {
  const std::string text = R"(
clusters:
  - name: c
    cluster:
      server: https://10.0.0.1
contexts:
  - name: x
    context: {"cluster": "c", "user": "u"}
current-context: x
users:
  - name: u
    user:
      client-certificate-data: Q0VSVA==
      client-key-data: "S0VZ"
)";
  auto c = ParseKubeconfig(text, Write("config", ""));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->client_cert_data, "CERT");
  EXPECT_EQ(c->client_key_data, "KEY");
}

TEST_F(ConfigTest, CertificateWithoutKeyIsRefused) {
  const std::string text = R"(clusters:
- name: c
  cluster:
    server: https://10.0.0.1
contexts:
- name: x
  context:
    cluster: c
    user: u
current-context: x
users:
- name: u
  user:
    client-certificate-data: Q0VSVA==
)";
  auto c = ParseKubeconfig(text, "/k");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("users[u].user.client-key"), std::string::npos) << c.status().message();
}

TEST_F(ConfigTest, MalformedFieldIsNamed) {
  const std::string text = R"(clusters:
- name: c
  cluster:
    server:
    - https://a
contexts:
- name: x
  context:
    cluster: c
current-context: x
)";
  auto c = ParseKubeconfig(text, "/etc/k");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().reason(), "InvalidConfig");
  EXPECT_NE(c.status().message().find("kubeconfig /etc/k: clusters[c].cluster.server: must be a string"),
            std::string::npos)
      << c.status().message();
  auto bad_base64 = ParseKubeconfig(R"(clusters:
- name: c
  cluster: {"server": "https://a", "certificate-authority-data": "!!!"}
contexts: [{"name": "x", "context": {"cluster": "c"}}]
current-context: x
)", "/k");
  ASSERT_FALSE(bad_base64.ok());
  EXPECT_NE(bad_base64.status().message().find("certificate-authority-data: is not valid base64"), std::string::npos);
}

TEST_F(ConfigTest, YamlSyntaxErrorNamesTheLine) {
  auto c = ParseKubeconfig("clusters:\n- name: c\n   bad: indent\n", "/k");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("line 3"), std::string::npos) << c.status().message();
  auto q = ParseKubeconfig("current-context: \"open\n", "/k");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("line 1"), std::string::npos) << q.status().message();
}

TEST_F(ConfigTest, UnknownContextAndMissingCurrentContext) {
  auto c = ParseKubeconfig(kKubectlStyle, "/k", LoadOptions{"nope", false});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no context named \"nope\""), std::string::npos);
  auto d = ParseKubeconfig("apiVersion: v1\nkind: Config\n", "/k");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("current-context"), std::string::npos);
}

TEST_F(ConfigTest, InsecureSkipVerifyIsRefusedUnlessAllowed) {
  const std::string text = R"(clusters:
- name: c
  cluster:
    server: https://10.0.0.1
    insecure-skip-tls-verify: true
contexts:
- name: x
  context:
    cluster: c
current-context: x
)";
  auto refused = ParseKubeconfig(text, "/k");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("insecure-skip-tls-verify"), std::string::npos);
  auto allowed = ParseKubeconfig(text, "/k", LoadOptions{"", true});
  ASSERT_TRUE(allowed.ok());
  EXPECT_TRUE(allowed->insecure_skip_tls_verify);
}

TEST_F(ConfigTest, JsonKubeconfig) {
  const std::string text = R"({"apiVersion":"v1","kind":"Config","current-context":"x",
    "clusters":[{"name":"c","cluster":{"server":"https://h:1"}}],
    "contexts":[{"name":"x","context":{"cluster":"c","user":"u"}}],
    "users":[{"name":"u","user":{"token":"t"}}]})";
  auto c = ParseKubeconfig(text, "/k.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->token, "t");
}

TEST_F(ConfigTest, ExecPluginIsRefusedWithAReason) {
  const std::string text = R"(clusters:
- name: c
  cluster:
    server: https://h
contexts:
- name: x
  context:
    cluster: c
    user: u
current-context: x
users:
- name: u
  user:
    exec:
      command: aws
)";
  auto c = ParseKubeconfig(text, "/k");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("users[u].user.exec"), std::string::npos);
}

TEST_F(ConfigTest, InClusterIpv6HostAndNamespace) {
  Write("sa/token", "satoken\n");
  Write("sa/ca.crt", "pem");
  Write("sa/namespace", "ml-jobs\n");
  auto c = LoadInClusterFrom("fd00::1", "443", (dir_ / "sa").string());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://[fd00::1]:443");
  EXPECT_EQ(c->token_file, (dir_ / "sa/token").string());
  EXPECT_EQ(c->ca_file, (dir_ / "sa/ca.crt").string());
  EXPECT_EQ(c->default_namespace, "ml-jobs");
  auto v4 = LoadInClusterFrom("10.96.0.1", "443", (dir_ / "sa").string());
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->server, "https://10.96.0.1:443");
}

TEST_F(ConfigTest, InClusterWithoutTokenNamesTheFile) {
  auto c = LoadInClusterFrom("10.96.0.1", "443", (dir_ / "nothing").string());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find((dir_ / "nothing/token").string()), std::string::npos);
  EXPECT_FALSE(LoadInClusterFrom("", "443", (dir_ / "nothing").string()).ok());
}

// The property fuzz/in_cluster checks (regression inputs regression-port-*, regression-host-*):
// any port and host text was pasted into the server URL.
TEST_F(ConfigTest, InClusterRefusesAPortOrHostThatIsNotOne) {
  Write("sa/token", "satoken\n");
  Write("sa/ca.crt", "pem");
  const std::string sa = (dir_ / "sa").string();
  for (const char* port : {"https", "0", "65536", "443/x", "-1", "4430000", " 443"}) {
    auto c = LoadInClusterFrom("10.96.0.1", port, sa);
    ASSERT_FALSE(c.ok()) << port;
    EXPECT_NE(c.status().message().find("KUBERNETES_SERVICE_PORT must be a port number"), std::string::npos);
  }
  for (const char* host : {"evil.example/path?", "user@10.0.0.1", "10.96.0.1 ", "a#b"}) {
    auto c = LoadInClusterFrom(host, "443", sa);
    ASSERT_FALSE(c.ok()) << host;
    EXPECT_NE(c.status().message().find("KUBERNETES_SERVICE_HOST must be a host name"), std::string::npos);
  }
  EXPECT_TRUE(LoadInClusterFrom("kubernetes.default.svc", "65535", sa).ok());
  EXPECT_TRUE(LoadInClusterFrom("[fd00::1]", "1", sa).ok());
}

TEST_F(ConfigTest, LoadPrefersFlagThenKubeconfigEnv) {
  std::string a = Write("a", "{\"current-context\":\"x\",\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"https://a\"}}],"
                             "\"contexts\":[{\"name\":\"x\",\"context\":{\"cluster\":\"c\"}}]}");
  std::string b = Write("b", "{\"current-context\":\"x\",\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"https://b\"}}],"
                             "\"contexts\":[{\"name\":\"x\",\"context\":{\"cluster\":\"c\"}}]}");
  ::setenv("KUBECONFIG", ((dir_ / "missing").string() + ":" + b).c_str(), 1);
  auto from_env = Load("");
  auto from_flag = Load(a);
  ::unsetenv("KUBECONFIG");
  ASSERT_TRUE(from_env.ok()) << from_env.status().ToString();
  EXPECT_EQ(from_env->server, "https://b");
  ASSERT_TRUE(from_flag.ok());
  EXPECT_EQ(from_flag->server, "https://a");
  auto missing = Load((dir_ / "nope").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find((dir_ / "nope").string()), std::string::npos);
}

}  // namespace
}  // namespace kube
