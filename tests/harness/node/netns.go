package main

import (
	"fmt"
	"hash/crc32"
	"log"
	"net"
	"os/exec"
	"strings"
	"sync"
)

// network owns the host bridge and hands each pod a network namespace with a veth pair
// whose pod end is eth0 on the bridge's subnet.
type network struct {
	bridge  string
	gateway net.IP     // bridge address, .1 of the subnet
	subnet  *net.IPNet // e.g. 10.244.0.0/24
	created bool       // the bridge was made by us, so we remove it on shutdown
	owner   string     // node name

	mu   sync.Mutex
	used map[int]string // last octet -> netns name
}

func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func newNetwork(owner, bridge, cidr string) (*network, error) {
	ip, subnet, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("--pod-cidr %q: %v", cidr, err)
	}
	if ones, bits := subnet.Mask.Size(); bits != 32 || ones < 16 || ones > 30 {
		return nil, fmt.Errorf("--pod-cidr %q: need an IPv4 subnet between /16 and /30", cidr)
	}
	gw := make(net.IP, 4)
	copy(gw, ip.To4().Mask(subnet.Mask))
	gw[3]++
	n := &network{owner: owner, bridge: bridge, gateway: gw, subnet: subnet, used: map[int]string{}}
	if err := exec.Command("ip", "link", "show", bridge).Run(); err != nil {
		if err := run("ip", "link", "add", bridge, "type", "bridge"); err != nil {
			return nil, err
		}
		n.created = true
		log.Printf("network: created bridge %s", bridge)
	}
	ones, _ := subnet.Mask.Size()
	addr := fmt.Sprintf("%s/%d", gw, ones)
	if out, _ := exec.Command("ip", "-o", "addr", "show", "dev", bridge).Output(); !strings.Contains(string(out), " "+addr+" ") {
		if err := run("ip", "addr", "add", addr, "dev", bridge); err != nil {
			return nil, err
		}
	}
	if err := run("ip", "link", "set", bridge, "up"); err != nil {
		return nil, err
	}
	n.cleanupStale()
	return n, nil
}

// nsPrefix names this node's namespaces, so that cleanup never touches another node's.
func (n *network) nsPrefix() string { return "tn-" + n.owner + "-" }

// cleanupStale removes namespaces a previous run of this node left behind.
func (n *network) cleanupStale() {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], n.nsPrefix()) {
			log.Printf("network: removing stale netns %s", f[0])
			_ = run("ip", "netns", "del", f[0])
		}
	}
}

// setupPod creates the pod's namespace and returns its name and IP.
func (n *network) setupPod() (string, net.IP, error) {
	n.mu.Lock()
	ones, _ := n.subnet.Mask.Size()
	hosts := 1<<(32-ones) - 2
	octet := -1
	for i := 2; i <= hosts; i++ {
		if _, taken := n.used[i]; !taken {
			octet = i
			break
		}
	}
	if octet < 0 {
		n.mu.Unlock()
		return "", nil, fmt.Errorf("no free pod IP in %s", n.subnet)
	}
	ns := fmt.Sprintf("%s%d", n.nsPrefix(), octet)
	n.used[octet] = ns
	n.mu.Unlock()

	base := n.subnet.IP.To4()
	v := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	v += uint32(octet)
	ip := net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).To4()
	hostVeth := hostVethOf(ns)
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", hostVeth, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "link", "set", hostVeth, "master", n.bridge, "up"},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "-n", ns, "addr", "add", fmt.Sprintf("%s/%d", ip, ones), "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
		{"ip", "-n", ns, "route", "add", "default", "via", n.gateway.String()},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			n.teardownPod(ns)
			return "", nil, err
		}
	}
	log.Printf("network: netns %s ip %s veth %s on %s", ns, ip, hostVeth, n.bridge)
	return ns, ip, nil
}

// hostVethOf names the host end of a pod's veth pair after its namespace (IP slot).
func hostVethOf(ns string) string { return fmt.Sprintf("vn%08x", crc32.ChecksumIEEE([]byte(ns))) }

// teardownPod deletes the pod's veth pair, then its namespace. The kernel would remove the
// pair with the namespace, but only asynchronously, and the next pod given this IP slot
// (and so this veth name) would meet "File exists"; deleting the link first is synchronous.
func (n *network) teardownPod(ns string) {
	if ns == "" {
		return
	}
	_ = run("ip", "link", "del", hostVethOf(ns)) // absent when setup failed early: fine
	if err := run("ip", "netns", "del", ns); err != nil {
		log.Printf("network: %v", err)
	}
	n.mu.Lock()
	for k, v := range n.used {
		if v == ns {
			delete(n.used, k)
		}
	}
	n.mu.Unlock()
}

func (n *network) shutdown() {
	n.cleanupStale()
	if n.created {
		if err := run("ip", "link", "del", n.bridge); err != nil {
			log.Printf("network: %v", err)
		} else {
			log.Printf("network: removed bridge %s", n.bridge)
		}
	}
}
