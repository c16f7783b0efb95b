#include "socket_ifname.h"

#include <gtest/gtest.h>

namespace nccl_k8s {
namespace {

IfnameInputs Pod() {
  IfnameInputs in;
  in.interfaces = {{"lo", "127.0.0.1"}, {"lo", "::1"}, {"eth0", "10.244.1.5"}, {"net1", "192.168.7.2"}};
  in.default_route_interface = "eth0";
  return in;
}

TEST(SocketIfname, PicksTheInterfaceHoldingThePodIp) {
  IfnameInputs in = Pod();
  in.pod_ip = "192.168.7.2";
  IfnameChoice c = ChooseSocketIfname(in);
  EXPECT_EQ(c.value, "net1");
  EXPECT_EQ(c.source, IfnameSource::kPodIp);
  EXPECT_TRUE(c.warnings.empty());
}

// hostNetwork: the pod IP is the node's, among the node's bridges, CNI and RDMA interfaces.
TEST(SocketIfname, OnTheHostNetworkPicksTheNodesInterface) {
  IfnameInputs in;
  in.interfaces = {{"lo", "127.0.0.1"},       {"docker0", "172.17.0.1"}, {"cni0", "10.244.1.1"},
                   {"ib0", "192.168.100.7"},   {"bond0", "10.0.3.17"},    {"vethab12", "169.254.1.1"}};
  in.default_route_interface = "bond0";
  in.pod_ip = "10.0.3.17";
  IfnameChoice c = ChooseSocketIfname(in);
  EXPECT_EQ(c.value, "bond0");
  EXPECT_EQ(c.source, IfnameSource::kPodIp);
  in.default_route_interface = "docker0";  // a stray default route does not sway it
  EXPECT_EQ(ChooseSocketIfname(in).value, "bond0");
}

TEST(SocketIfname, PodIpOnIpv6) {
  IfnameInputs in = Pod();
  in.interfaces.push_back({"eth1", "fd00::5"});
  in.pod_ip = "fd00::5";
  EXPECT_EQ(ChooseSocketIfname(in).value, "eth1");
}

TEST(SocketIfname, FallsBackToTheDefaultRouteWithAWarning) {
  IfnameInputs in = Pod();
  in.pod_ip = "10.9.9.9";  // on no interface here
  IfnameChoice c = ChooseSocketIfname(in);
  EXPECT_EQ(c.value, "eth0");
  EXPECT_EQ(c.source, IfnameSource::kDefaultRoute);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("10.9.9.9"), std::string::npos);
}

TEST(SocketIfname, DefaultRouteWithoutPodIp) {
  IfnameChoice c = ChooseSocketIfname(Pod());
  EXPECT_EQ(c.value, "eth0");
  EXPECT_TRUE(c.warnings.empty());
}

TEST(SocketIfname, NothingFoundLeavesItUnset) {
  IfnameInputs in = Pod();
  in.default_route_interface = "";
  IfnameChoice c = ChooseSocketIfname(in);
  EXPECT_EQ(c.value, "");
  EXPECT_EQ(c.source, IfnameSource::kNone);
  EXPECT_EQ(c.warnings.size(), 1u);
}

TEST(SocketIfname, KeepsTheUsersValueVerbatim) {
  for (const char* value : {"eth", "^docker,lo", "=net1", "^=eth0", "eth0,net"}) {
    IfnameInputs in = Pod();
    in.user_value = value;
    in.pod_ip = "10.244.1.5";
    IfnameChoice c = ChooseSocketIfname(in);
    EXPECT_EQ(c.value, value);
    EXPECT_EQ(c.source, IfnameSource::kUser);
  }
}

TEST(SocketIfname, WarnsOnlyForNamesThatMatchNothing) {
  IfnameInputs in = Pod();
  in.user_value = "eth,ib";  // prefixes: eth matches eth0, ib matches nothing
  IfnameChoice c = ChooseSocketIfname(in);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("'ib'"), std::string::npos);

  in.user_value = "=eth";  // exact: eth is not eth0
  EXPECT_EQ(ChooseSocketIfname(in).warnings.size(), 1u);
  in.user_value = "=eth0";
  EXPECT_TRUE(ChooseSocketIfname(in).warnings.empty());
  in.user_value = "^docker";
  c = ChooseSocketIfname(in);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("changes nothing"), std::string::npos);
}

TEST(SocketIfname, EmptyUserValueCountsAsUnset) {
  IfnameInputs in = Pod();
  in.user_value = "";
  EXPECT_EQ(ChooseSocketIfname(in).source, IfnameSource::kDefaultRoute);
}

TEST(SocketIfname, ParsesNcclSyntax) {
  IfnameSpec s = ParseIfnameSpec("^=eth0,eth1");
  EXPECT_TRUE(s.exclude);
  EXPECT_TRUE(s.exact);
  EXPECT_EQ(s.names, (std::vector<std::string>{"eth0", "eth1"}));
  s = ParseIfnameSpec("ib,,en");
  EXPECT_FALSE(s.exclude);
  EXPECT_FALSE(s.exact);
  EXPECT_EQ(s.names, (std::vector<std::string>{"ib", "en"}));
}

TEST(SocketIfname, ParsesProcNetRoute) {
  const char* table =
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
      "net1\t0007A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
      "eth1\t00000000\t0101A8C0\t0003\t0\t0\t200\t00000000\t0\t0\t0\n"
      "eth0\t00000000\t0101F40A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
      "down0\t00000000\t0101F40A\t0002\t0\t0\t1\t00000000\t0\t0\t0\n";
  EXPECT_EQ(ParseDefaultRoute(table), "eth0");  // lowest metric among routes that are up
  EXPECT_EQ(ParseDefaultRoute("Iface\tDestination\n"), "");
}

}  // namespace
}  // namespace nccl_k8s
