// testnode plays the kubelet for one node of the local test control plane: it registers a
// Node, binds pending pods to it and runs each pod's containers as processes in the pod's
// own network namespace. Test and demo infrastructure, not product.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
)

const usage = `testnode: a local node for the test control plane (plays the kubelet for one node).

Usage: testnode [flags]   (runs as root: it creates network namespaces and a bridge)

It registers Node --node-name, renews its Lease in kube-node-lease, binds pending pods to
itself (unless --schedule=false) and runs the pods bound to it. Each pod gets a network
namespace with eth0 on --bridge (pod IPs from --pod-cidr); its containers run as processes
there, in a private mount namespace with the ServiceAccount token at
/var/run/secrets/kubernetes.io/serviceaccount. Images are mapped to local directories with
--image-map; a container's command[0] is looked up there, then in PATH, and the image's
directory comes first on the process's PATH.

Pods reach the API server at KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, by default
<bridge address>:443, which this node forwards to the kubeconfig's server.

HTTPS on --port serves GET /containerLogs/{ns}/{pod}/{container} (kubectl logs).
Test helpers (HTTP, --debug-addr, address also written to STATE/debug-addr):
  POST /debug/kill?namespace=N&pod=P&container=C&signal=KILL
  GET  /debug/pods
Pid files: STATE/pids/<namespace>/<pod>/<container>. Logs: STATE/pods/<ns>_<pod>_<uid>/<container>/<restart>.log.
STATE/ready appears once the node is registered and serving.

Container restarts follow kubelet 1.37.2: restartPolicyRules (first match), then the container's
restartPolicy, then the pod's; the action RestartAllContainers restarts every container of the
pod in place (same UID, IP and volumes; condition AllContainersRestarting) while the Node declares
RestartAllContainersOnContainerExits (--declared-features). A container restarting often waits in
CrashLoopBackOff: the first restart is immediate, then --restart-backoff-initial doubling up to
--restart-backoff-max; a container that ran 10 minutes starts over.

Flags:
`

func main() {
	cpDir := os.Getenv("CONTROLPLANE_DIR")
	var (
		kubeconfig = flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the control plane (default $KUBECONFIG)")
		nodeName   = flag.String("node-name", "local-node", "name of the Node object")
		nodeIP     = flag.String("node-ip", "127.0.0.1", "InternalIP of the node; the API server connects here for logs")
		port       = flag.Int("port", 10250, "HTTPS port of the log endpoint (0: a free port)")
		debugAddr  = flag.String("debug-addr", "127.0.0.1:0", "listen address of the test helper HTTP API")
		stateDir   = flag.String("state-dir", "", "where logs, volumes and pid files live (default /tmp/testnode-<node-name>)")
		bridge     = flag.String("bridge", "ncclbr0", "host bridge the pods attach to (created if missing, removed on exit if created)")
		podCIDR    = flag.String("pod-cidr", "10.244.0.0/24", "pod subnet; the bridge gets its first address")
		imageMapF  = flag.String("image-map", "", "comma-separated IMAGE_PATTERN=DIR, e.g. 'nccl-sidecar:*=/path/build/sidecar'")
		caCert     = flag.String("ca-cert", filepath.Join(cpDir, "pki/ca.crt"), "cluster CA certificate (default $CONTROLPLANE_DIR/pki/ca.crt)")
		caKey      = flag.String("ca-key", filepath.Join(cpDir, "pki/ca.key"), "cluster CA key, signs the serving certificate")
		cpu        = flag.String("cpu", strconv.Itoa(runtime.NumCPU()), "allocatable cpu")
		memory     = flag.String("memory", "16Gi", "allocatable memory")
		ephemeral  = flag.String("ephemeral-storage", "100Gi", "allocatable ephemeral-storage (a kubelet reports it; pods that request it fit only where a node has it)")
		maxPods    = flag.Int("max-pods", 110, "allocatable pods")
		gpus       = flag.Int("gpus", 0, "allocatable nvidia.com/gpu")
		schedule   = flag.Bool("schedule", true, "bind pending pods without a node to this node (a trivial scheduler)")
		proxy      = flag.Bool("apiserver-proxy", true, "forward <bridge address>:443 to the API server for pods; turn off when the API server listens on the bridge itself")
		svcHost    = flag.String("service-host", "", "KUBERNETES_SERVICE_HOST for pods (default: the bridge address)")
		svcPort    = flag.String("service-port", "", "KUBERNETES_SERVICE_PORT for pods (default: 443 with the proxy, else the API server's port)")
		features   = flag.String("declared-features", featureRestartAll, "comma-separated Node status.declaredFeatures; empty: none, and rules with the RestartAllContainers action are skipped as by a kubelet with that gate off")
		boInitial  = flag.Duration("restart-backoff-initial", 10*time.Second, "crash-loop back-off before a container's second quick restart (a kubelet: 10s, fixed)")
		boMax      = flag.Duration("restart-backoff-max", 300*time.Second, "longest crash-loop back-off (a kubelet: KubeletConfiguration crashLoopBackOff.maxContainerRestartPeriod, 1s-300s, default 300s)")
	)
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage)
		flag.PrintDefaults()
	}
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("[testnode] ")
	if err := runNode(nodeOptions{*kubeconfig, *nodeName, *nodeIP, *port, *debugAddr, *stateDir, *bridge, *podCIDR, *imageMapF,
		*caCert, *caKey, *cpu, *memory, *ephemeral, *maxPods, *gpus, *schedule, *proxy, *svcHost, *svcPort,
		*features, *boInitial, *boMax}); err != nil {
		log.Printf("error: %v", err)
		os.Exit(1)
	}
}

type nodeOptions struct {
	kubeconfig, nodeName, nodeIP string
	port                         int
	debugAddr, stateDir          string
	bridge, podCIDR, imageMap    string
	caCert, caKey, cpu, memory   string
	ephemeral                    string
	maxPods, gpus                int
	schedule, proxy              bool
	serviceHost, servicePort     string
	declaredFeatures             string
	backoffInitial, backoffMax   time.Duration
}

func runNode(o nodeOptions) error {
	if os.Geteuid() != 0 {
		return errors.New("testnode needs root (network namespaces, bridge, mounts); run it with sudo")
	}
	if o.kubeconfig == "" {
		return errors.New("no kubeconfig: pass --kubeconfig or source the control plane's env file")
	}
	if o.stateDir == "" {
		o.stateDir = "/tmp/testnode-" + o.nodeName
	}
	images, err := parseImageMap(o.imageMap)
	if err != nil {
		return err
	}
	if o.backoffInitial <= 0 || o.backoffMax <= 0 {
		return fmt.Errorf("--restart-backoff-initial (%v) and --restart-backoff-max (%v) must be positive", o.backoffInitial, o.backoffMax)
	}
	features := parseFeatures(o.declaredFeatures)
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", o.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	caPEM, err := os.ReadFile(o.caCert)
	if err != nil {
		return fmt.Errorf("--ca-cert: %w", err)
	}
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		return fmt.Errorf("iproute2 'ip' not found: %w", err)
	}
	unsharePath, err := exec.LookPath("unshare")
	if err != nil {
		return fmt.Errorf("util-linux 'unshare' not found: %w", err)
	}
	for _, d := range []string{"pods", "pids"} {
		if err := os.MkdirAll(filepath.Join(o.stateDir, d), 0o755); err != nil {
			return err
		}
	}
	_ = os.Remove(filepath.Join(o.stateDir, "ready"))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	netw, err := newNetwork(o.nodeName, o.bridge, o.podCIDR)
	if err != nil {
		return err
	}
	defer netw.shutdown()

	apiURL, err := url.Parse(cfg.Host)
	if err != nil {
		return err
	}
	apiPort := apiURL.Port()
	if apiPort == "" {
		apiPort = "443"
	}
	if o.serviceHost == "" {
		o.serviceHost = netw.gateway.String()
	}
	if o.servicePort == "" {
		o.servicePort = apiPort
		if o.proxy {
			o.servicePort = "443"
		}
	}
	if o.proxy {
		if _, err := apiProxy(ctx, net.JoinHostPort(netw.gateway.String(), "443"), apiURL.Host); err != nil {
			return fmt.Errorf("API server proxy: %w", err)
		}
	}

	cert, pool, err := servingCert(o.caCert, o.caKey, o.nodeName, []string{o.nodeIP, "127.0.0.1"})
	if err != nil {
		return fmt.Errorf("serving certificate (needs --ca-cert and --ca-key): %w", err)
	}
	logLn, err := net.Listen("tcp", net.JoinHostPort(o.nodeIP, strconv.Itoa(o.port)))
	if err != nil {
		return fmt.Errorf("--port: %w", err)
	}
	o.port = logLn.Addr().(*net.TCPAddr).Port
	debugLn, err := net.Listen("tcp", o.debugAddr)
	if err != nil {
		return fmt.Errorf("--debug-addr: %w", err)
	}

	a := &agent{client: client, nodeName: o.nodeName, nodeIP: o.nodeIP, port: o.port, stateDir: o.stateDir, images: images,
		net: netw, caPEM: caPEM, serviceHost: o.serviceHost, servicePort: o.servicePort, ipPath: ipPath, unsharePath: unsharePath,
		cpu: o.cpu, memory: o.memory, ephemeral: o.ephemeral, maxPods: o.maxPods, gpus: o.gpus, schedule: o.schedule,
		declaredFeatures: features, restartAll: slices.Contains(features, featureRestartAll),
		backoffInitial: o.backoffInitial, backoffMax: o.backoffMax,
		pods: map[types.UID]*podRunner{}, ended: map[types.UID]bool{}}

	logSrv := &http.Server{Handler: a.logHandler(), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert},
		ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}}
	go func() {
		if err := logSrv.ServeTLS(logLn, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("log server: %v", err)
		}
	}()
	debugSrv := &http.Server{Handler: a.debugHandler()}
	go func() {
		if err := debugSrv.Serve(debugLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Printf("debug server: %v", err)
		}
	}()
	if err := os.WriteFile(filepath.Join(o.stateDir, "debug-addr"), []byte(debugLn.Addr().String()+"\n"), 0o644); err != nil {
		return err
	}

	regCtx, regCancel := context.WithTimeout(ctx, 60*time.Second)
	err = a.register(regCtx)
	regCancel()
	if err != nil {
		return err
	}
	go a.heartbeat(ctx)
	go a.resyncStatus(ctx)
	a.watchPods(ctx)
	log.Printf("node %s ready: logs https://%s, debug http://%s, bridge %s %s, pods reach the API server at %s:%s, state %s",
		o.nodeName, logLn.Addr(), debugLn.Addr(), o.bridge, netw.gateway, o.serviceHost, o.servicePort, o.stateDir)
	_ = os.WriteFile(filepath.Join(o.stateDir, "ready"), []byte(fmt.Sprintf("port=%d\ndebug=%s\n", o.port, debugLn.Addr())), 0o644)

	sig := <-sigs
	log.Printf("received %v: stopping pods", sig)
	cancel()
	a.waitPods(15 * time.Second)
	debugSrv.Close()
	logSrv.Close()
	markNotReady(client, o.nodeName)
	_ = os.Remove(filepath.Join(o.stateDir, "ready"))
	log.Printf("stopped")
	return nil
}

// parseFeatures reads --declared-features: sorted, without blanks or repeats (nil when empty).
func parseFeatures(list string) []string {
	var out []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// markNotReady tells the control plane the node is gone without deleting it. Nothing else
// marks this node (the test control plane runs no node lifecycle controller), so a loaded API
// server gets a generous deadline, and a failure is logged.
func markNotReady(client kubernetes.Interface, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range node.Status.Conditions {
			if node.Status.Conditions[i].Type == v1.NodeReady {
				node.Status.Conditions[i].Status = v1.ConditionFalse
				node.Status.Conditions[i].Reason = "KubeletStopped"
				node.Status.Conditions[i].LastTransitionTime = metav1.Now()
			}
		}
		_, err = client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		log.Printf("node: marking the node NotReady: %v", err)
	}
}
