package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// agent is the node: it registers itself, binds and runs pods, reports their status.
type agent struct {
	client      kubernetes.Interface
	nodeName    string
	nodeIP      string
	port        int
	stateDir    string
	images      imageMap
	net         *network
	caPEM       []byte
	serviceHost string
	servicePort string
	ipPath      string
	unsharePath string
	cpu, memory string
	ephemeral   string // allocatable ephemeral-storage, as a kubelet reports its root filesystem
	maxPods     int
	gpus        int
	schedule    bool
	// Node status.declaredFeatures; restartAll: featureRestartAll is among them, so rules with
	// the RestartAllContainers action act (else they are skipped, as by a kubelet with the gate off).
	declaredFeatures []string
	restartAll       bool
	// The crash-loop back-off of container restarts (restart_rules.go).
	backoffInitial, backoffMax time.Duration

	mu      sync.Mutex
	pods    map[types.UID]*podRunner
	ended   map[types.UID]bool // pods that finished before this process saw them (left alone)
	binding sync.Map           // UIDs of pods being bound (bind retries while the API server is away)
}

func (a *agent) nodeObject() *v1.Node {
	rl := v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse(a.cpu),
		v1.ResourceMemory:           resource.MustParse(a.memory),
		v1.ResourceEphemeralStorage: resource.MustParse(a.ephemeral),
		v1.ResourcePods:             *resource.NewQuantity(int64(a.maxPods), resource.DecimalSI),
	}
	if a.gpus > 0 {
		rl["nvidia.com/gpu"] = *resource.NewQuantity(int64(a.gpus), resource.DecimalSI)
	}
	now := metav1.Now()
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: a.nodeName, Labels: map[string]string{
			"kubernetes.io/hostname": a.nodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"ncclop.test/local-node": "true"}},
		Status: v1.NodeStatus{
			Capacity: rl, Allocatable: rl,
			Addresses:       []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: a.nodeIP}, {Type: v1.NodeHostName, Address: a.nodeIP}},
			DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: int32(a.port)}},
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
				Message: "testnode is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}},
			NodeInfo: v1.NodeSystemInfo{KubeletVersion: "v1.37.2-testnode", OperatingSystem: "linux", Architecture: "amd64",
				ContainerRuntimeVersion: "testnode://processes"},
			DeclaredFeatures: a.declaredFeatures,
		},
	}
}

// register creates or refreshes the Node and its status.
func (a *agent) register(ctx context.Context) error {
	want := a.nodeObject()
	node, err := a.client.CoreV1().Nodes().Get(ctx, a.nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, err = a.client.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("register node %s: %w", a.nodeName, err)
	}
	return a.postNodeStatus(ctx, node)
}

func (a *agent) postNodeStatus(ctx context.Context, node *v1.Node) error {
	want := a.nodeObject()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if node == nil {
			var err error
			if node, err = a.client.CoreV1().Nodes().Get(ctx, a.nodeName, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		for _, c := range node.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
				want.Status.Conditions[0].LastTransitionTime = c.LastTransitionTime
			}
		}
		node.Status = want.Status
		_, err := a.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		node = nil
		return err
	})
}

// heartbeat renews the node Lease every 10s and the Node status every minute.
func (a *agent) heartbeat(ctx context.Context) {
	leases := a.client.CoordinationV1().Leases("kube-node-lease")
	dur := int32(40)
	lastStatus := time.Now()
	for {
		now := metav1.NewMicroTime(time.Now())
		lease, err := leases.Get(ctx, a.nodeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			holder := a.nodeName
			_, err = leases.Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: a.nodeName,
				OwnerReferences: a.nodeOwner(ctx)},
				Spec: coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now}}, metav1.CreateOptions{})
		} else if err == nil {
			lease.Spec.RenewTime = &now
			_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		}
		if err != nil && ctx.Err() == nil {
			log.Printf("node: lease renewal: %v", err)
		}
		if time.Since(lastStatus) > time.Minute {
			if err := a.postNodeStatus(ctx, nil); err != nil && ctx.Err() == nil {
				log.Printf("node: status: %v", err)
			}
			lastStatus = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Second):
		}
	}
}

func (a *agent) nodeOwner(ctx context.Context) []metav1.OwnerReference {
	n, err := a.client.CoreV1().Nodes().Get(ctx, a.nodeName, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}}
}

// watchPods runs the pods bound to this node and, when scheduling is on, binds pending pods.
func (a *agent) watchPods(ctx context.Context) {
	mine := informers.NewSharedInformerFactoryWithOptions(a.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", a.nodeName).String()
	}))
	mine.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.onPod(ctx, obj.(*v1.Pod)) },
		UpdateFunc: func(_, obj any) { a.onPod(ctx, obj.(*v1.Pod)) },
		DeleteFunc: func(obj any) {
			if pod, ok := obj.(*v1.Pod); ok {
				a.forget(pod.UID)
			}
		},
	})
	mine.Start(ctx.Done())
	if !a.schedule {
		return
	}
	pending := informers.NewSharedInformerFactoryWithOptions(a.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.AndSelectors(fields.OneTermEqualSelector("spec.nodeName", ""),
			fields.OneTermNotEqualSelector("status.phase", string(v1.PodSucceeded)),
			fields.OneTermNotEqualSelector("status.phase", string(v1.PodFailed))).String()
	}))
	bind := func(obj any) {
		if pod, ok := obj.(*v1.Pod); ok {
			go a.bind(ctx, pod) // may retry for a while: never hold up the informer's other events
		}
	}
	pending.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: bind, UpdateFunc: func(_, obj any) { bind(obj) }})
	pending.Start(ctx.Done())
}

// bind is the trivial scheduler: every schedulable pod goes to this node. A bind the API server
// did not take because it is away (no connection, 5xx, 429) is tried again with backoff until
// it lands or the pod is gone or bound, as kube-scheduler requeues a pod whose binding failed
// (found by tests/chaos: pods made just before an API server restart stayed unbound for good).
func (a *agent) bind(ctx context.Context, pod *v1.Pod) {
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || len(pod.Spec.SchedulingGates) > 0 {
		return
	}
	if s := pod.Spec.SchedulerName; s != "" && s != v1.DefaultSchedulerName {
		return
	}
	if _, busy := a.binding.LoadOrStore(pod.UID, true); busy {
		return
	}
	defer a.binding.Delete(pod.UID)
	b := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target: v1.ObjectReference{Kind: "Node", Name: a.nodeName}}
	backoff := 200 * time.Millisecond
	for tries := 1; ; tries++ {
		err := a.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{})
		if err == nil {
			log.Printf("scheduler: bound %s/%s to %s", pod.Namespace, pod.Name, a.nodeName)
			return
		}
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) { // bound already, or gone
			return
		}
		away := serverAway(err)
		if tries == 1 || !away {
			log.Printf("scheduler: bind %s/%s: %v%s", pod.Namespace, pod.Name, err, map[bool]string{true: "; retrying"}[away])
		}
		if !away {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (a *agent) onPod(ctx context.Context, pod *v1.Pod) {
	a.mu.Lock()
	r := a.pods[pod.UID]
	if r == nil && !a.ended[pod.UID] {
		terminal := pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
		if pod.DeletionTimestamp != nil || terminal {
			a.mu.Unlock()
			if pod.DeletionTimestamp != nil {
				// Nothing of it runs here (finished earlier or before a node restart).
				a.deleteObject(ctx, pod.Namespace, pod.Name, pod.UID)
			}
			return
		}
		r = newPodRunner(a, pod)
		a.pods[pod.UID] = r
		a.mu.Unlock()
		log.Printf("pod %s/%s: admitted (uid %s)", pod.Namespace, pod.Name, pod.UID)
		go r.run(ctx)
		return
	}
	a.mu.Unlock()
	if r != nil && pod.DeletionTimestamp != nil {
		grace := int64(30)
		if pod.DeletionGracePeriodSeconds != nil {
			grace = *pod.DeletionGracePeriodSeconds
		}
		r.requestDelete(grace)
	}
}

func (a *agent) forget(uid types.UID) {
	a.mu.Lock()
	r := a.pods[uid]
	delete(a.pods, uid)
	a.mu.Unlock()
	if r != nil {
		r.requestDelete(0)
	}
}

func (a *agent) runner(ns, name string) *podRunner {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.pods {
		if r.pod.Namespace == ns && r.pod.Name == name {
			return r
		}
	}
	return nil
}

func (a *agent) allRunners() []*podRunner {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*podRunner, 0, len(a.pods))
	for _, r := range a.pods {
		out = append(out, r)
	}
	return out
}

// pushStatus writes the runner's view to the pod's status subresource.
func (a *agent) pushStatus(ctx context.Context, r *podRunner) {
	if r.statusHeld() {
		return
	}
	pods := a.client.CoreV1().Pods(r.pod.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, r.pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.UID != r.uid {
			return nil
		}
		pod.Status = r.status(pod.Status, a.nodeIP)
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
		r.logf("status update: %v (resent until it lands)", err)
		r.statusStale.Store(true)
		return
	}
	r.statusStale.Store(false)
	r.notePublished()
}

// resyncStatus resends, every second, the status of pods whose last update failed (the API
// server was away), as a kubelet's status manager does: otherwise a pod that ended while the API
// server restarted would stay Running in the API for good.
func (a *agent) resyncStatus(ctx context.Context) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		for _, r := range a.allRunners() {
			if r.statusStale.Load() {
				a.pushStatus(ctx, r)
			}
		}
	}
}

// deletePod removes the API object with grace 0 once the pod's processes are gone, as a
// kubelet does, so that the name can be reused at once.
func (a *agent) deletePod(ctx context.Context, r *podRunner) {
	a.deleteObject(ctx, r.pod.Namespace, r.pod.Name, r.uid)
	a.mu.Lock()
	delete(a.pods, r.uid)
	a.ended[r.uid] = true
	a.mu.Unlock()
	_ = os.RemoveAll(r.dir)
	_ = os.RemoveAll(filepath.Join(a.stateDir, "pids", r.pod.Namespace, r.pod.Name))
}

func (a *agent) deleteObject(ctx context.Context, ns, name string, uid types.UID) {
	zero := int64(0)
	err := a.client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
		Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		log.Printf("pod %s/%s: delete: %v", ns, name, err)
		return
	}
	log.Printf("pod %s/%s: deleted", ns, name)
}

// pidFile is where tests find a container's current process: pids/<ns>/<pod>/<container>.
func (a *agent) pidFile(pod *v1.Pod, container string) string {
	return filepath.Join(a.stateDir, "pids", pod.Namespace, pod.Name, container)
}

func (a *agent) writePidFile(pod *v1.Pod, container string, pid int) {
	path := a.pidFile(pod, container)
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	_ = os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

// shutdown stops all pods (their goroutines see ctx cancelled) and waits for them.
func (a *agent) waitPods(d time.Duration) {
	deadline := time.After(d)
	for _, r := range a.allRunners() {
		select {
		case <-r.done:
		case <-deadline:
			return
		}
	}
}
