#include "tls_server_name.h"

#include <gtest/gtest.h>

namespace kube::internal {
namespace {

TEST(TlsServerName, UrlHostIsCheckedWhenNothingOverridesIt) {
  EXPECT_FALSE(RouteForTlsServerName("https://api.example:6443", "", false));
  EXPECT_FALSE(RouteForTlsServerName("https://10.96.0.1:443", "", true));
}

TEST(TlsServerName, KubeconfigNameIsCheckedAndAddressKept) {
  auto route = RouteForTlsServerName("https://10.0.0.5:6443", "api.internal", true);
  ASSERT_TRUE(route);
  EXPECT_EQ(route->server, "https://api.internal:6443");
  EXPECT_EQ(route->connect_to, "api.internal:6443:10.0.0.5:6443");
}

TEST(TlsServerName, IpServerWithoutIpMatchingChecksTheServiceName) {
  auto route = RouteForTlsServerName("https://127.0.0.1:38159", "", false);
  ASSERT_TRUE(route);
  EXPECT_EQ(route->server, "https://kubernetes.default.svc:38159");
  EXPECT_EQ(route->connect_to, "kubernetes.default.svc:38159:127.0.0.1:38159");
}

TEST(TlsServerName, Ipv6AndDefaultPortAndPath) {
  auto route = RouteForTlsServerName("https://[fd00::1]", "", false);
  ASSERT_TRUE(route);
  EXPECT_EQ(route->server, "https://kubernetes.default.svc:443");
  EXPECT_EQ(route->connect_to, "kubernetes.default.svc:443:[fd00::1]:443");
  route = RouteForTlsServerName("https://10.1.2.3:6443/prefix", "n", true);
  ASSERT_TRUE(route);
  EXPECT_EQ(route->server, "https://n:6443/prefix");
}

TEST(TlsServerName, PlainHttpAndMalformedAreLeftAlone) {
  EXPECT_FALSE(RouteForTlsServerName("http://127.0.0.1:8080", "", false));
  EXPECT_FALSE(RouteForTlsServerName("https://[::1:6443", "", false));
}

TEST(TlsServerName, IpLiterals) {
  EXPECT_TRUE(IsIpLiteral("10.96.0.1"));
  EXPECT_TRUE(IsIpLiteral("[::1]"));
  EXPECT_FALSE(IsIpLiteral("kubernetes.default.svc"));
  EXPECT_FALSE(IsIpLiteral("::1"));  // URL hosts carry IPv6 in brackets
  EXPECT_FALSE(IsIpLiteral("10.96.0"));
}

}  // namespace
}  // namespace kube::internal
