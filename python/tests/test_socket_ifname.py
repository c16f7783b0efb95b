from nccl_k8s.socket_ifname import (InterfaceAddress, choose_socket_ifname, parse_default_route,
                                    parse_default_route_v6, parse_ifname_spec)

ITFS = [InterfaceAddress("lo", "127.0.0.1"), InterfaceAddress("eth0", "10.0.0.5"), InterfaceAddress("ib0", "10.1.0.5")]


def test_the_pod_ip_interface_wins_over_the_default_route():
    choice = choose_socket_ifname(None, "10.1.0.5", ITFS, "eth0")
    assert (choice.value, choice.source, choice.warnings) == ("ib0", "pod-ip", ())


def test_a_pod_ip_on_no_interface_falls_back_with_a_warning():
    choice = choose_socket_ifname(None, "10.9.9.9", ITFS, "eth0")
    assert (choice.value, choice.source) == ("eth0", "default-route")
    assert "NCCLJOB_POD_IP=10.9.9.9 is on no interface" in choice.warnings[0]


def test_nothing_found_leaves_it_unset():
    choice = choose_socket_ifname(None, "", [], "")
    assert (choice.value, choice.source) == ("", "none")


def test_a_users_value_is_kept_and_checked():
    choice = choose_socket_ifname("^docker,=x", "10.0.0.5", ITFS, "eth0")
    assert (choice.value, choice.source) == ("^docker,=x", "user")
    assert choice.warnings == (
        "NCCL_SOCKET_IFNAME='^docker,=x': no interface whose name starts with 'docker' exists in this pod "
        "(excluding it changes nothing)",
        "NCCL_SOCKET_IFNAME='^docker,=x': no interface whose name starts with '=x' exists in this pod "
        "(excluding it changes nothing)")
    assert choose_socket_ifname("=eth", "", ITFS, "").warnings[0].endswith(
        "no interface named 'eth' exists in this pod; NCCL may find no interface to bootstrap over")


def test_spec_parsing():
    spec = parse_ifname_spec("^=eth0,,ib")
    assert (spec.exclude, spec.exact, spec.names) == (True, True, ("eth0", "ib"))


def test_default_routes():
    table = ("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n"
             "eth0\t00000000\t0100000A\t0003\t0\t0\t200\t00000000\n"
             "ib0\t00000000\t0100010A\t0003\t0\t0\t100\t00000000\n"
             "eth1\t00000000\t0100010A\t0002\t0\t0\t1\t00000000\n"
             "eth2\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\n")
    assert parse_default_route(table) == "ib0"
    assert parse_default_route("") == ""
    v6 = ("00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
          "00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo\n"
          "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
          "fd000000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n")
    assert parse_default_route_v6(v6) == "eth0"
