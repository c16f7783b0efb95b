package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const saMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// wrapScript runs inside the pod's mount and UTS namespaces: it names the host, bind-mounts
// the pod's volumes and then becomes the container's command. Sources and the command are
// reached through a second view of the host's tree (hostView), because a volume mounted over
// a host directory (the chart's emptyDir at /tmp, say) would otherwise hide the node's state
// and build directories that live below it.
const wrapScript = `h=$1; n=$2; view=$3; shift 3
printf %s "$h" > /proc/sys/kernel/hostname 2>/dev/null
mkdir -p "$view" && mount --rbind / "$view" || { echo "testnode: cannot bind the host tree at $view" >&2; exit 126; }
while [ "$n" -gt 0 ]; do
  src="$view$1"
  if [ -d "$src" ]; then mkdir -p "$2"; else mkdir -p "$(dirname "$2")"; [ -e "$2" ] || : > "$2"; fi
  mount --bind "$src" "$2" || { echo "testnode: cannot mount $1 at $2" >&2; exit 126; }
  if [ "$3" = ro ]; then mount -o remount,bind,ro "$2" 2>/dev/null; fi
  shift 3; n=$((n-1))
done
exe=$1; shift
case "$exe" in /*) [ -e "$exe" ] || exe="$view$exe" ;; esac
exec "$exe" "$@"`

// hostView is where the wrapper binds the host's tree inside a container's mount namespace.
const hostView = "/run/testnode-host"

type procSpec struct {
	argv     []string // what is executed (wrapper included)
	userArgv []string // the container's own command line
	env      []string
	dir      string
}

func (a *agent) serviceEnv() []v1.EnvVar {
	h, port := a.serviceHost, a.servicePort
	return []v1.EnvVar{
		{Name: "KUBERNETES_SERVICE_HOST", Value: h},
		{Name: "KUBERNETES_SERVICE_PORT", Value: port},
		{Name: "KUBERNETES_SERVICE_PORT_HTTPS", Value: port},
		{Name: "KUBERNETES_PORT", Value: "tcp://" + h + ":" + port},
		{Name: "KUBERNETES_PORT_" + port + "_TCP", Value: "tcp://" + h + ":" + port},
		{Name: "KUBERNETES_PORT_" + port + "_TCP_PROTO", Value: "tcp"},
		{Name: "KUBERNETES_PORT_" + port + "_TCP_PORT", Value: port},
		{Name: "KUBERNETES_PORT_" + port + "_TCP_ADDR", Value: h},
	}
}

func (a *agent) processSpec(ctx context.Context, p *podRunner, c *container) (*procSpec, error) {
	r := &envResolver{pod: p.pod, podIP: p.ip.String(), serviceEnv: a.serviceEnv(), lookup: a.lookupKey, lookupAll: a.lookupAll}
	env, vars, err := r.resolve(ctx, &c.spec)
	if err != nil {
		return nil, err
	}
	var user []string
	for _, s := range c.spec.Command {
		user = append(user, expandVars(s, vars))
	}
	for _, s := range c.spec.Args {
		user = append(user, expandVars(s, vars))
	}
	if len(user) == 0 {
		return nil, fmt.Errorf("container %s has neither command nor args; this node has no image entrypoints, so give the pod a command", c.spec.Name)
	}
	imageDir := a.images.dirFor(c.spec.Image)
	exe, err := resolveCommand(user[0], imageDir, vars["PATH"])
	if err != nil {
		return nil, err
	}
	env = withImageDirOnPath(env, imageDir)
	mounts, err := p.mountsFor(c)
	if err != nil {
		return nil, err
	}
	var argv []string
	if p.netns != "" {
		argv = append(argv, "ip", "netns", "exec", p.netns)
	}
	argv = append(argv, "unshare", "--mount", "--uts", "--propagation", "private", "/bin/sh", "-c", wrapScript, "testnode-wrap",
		p.pod.Name, strconv.Itoa(len(mounts)), hostView)
	for _, m := range mounts {
		ro := "rw"
		if m.readOnly {
			ro = "ro"
		}
		argv = append(argv, m.src, m.dst, ro)
	}
	argv = append(argv, exe)
	argv = append(argv, user[1:]...)
	if argv[0] == "ip" {
		argv[0] = a.ipPath
	} else {
		argv[0] = a.unsharePath
	}
	dir := "/"
	if c.spec.WorkingDir != "" {
		dir = c.spec.WorkingDir
		_ = os.MkdirAll(dir, 0o755)
	} else if imageDir != "" {
		dir = imageDir
	}
	return &procSpec{argv: argv, userArgv: user, env: env, dir: dir}, nil
}

type mount struct {
	src, dst string
	readOnly bool
}

// mountsFor maps the container's volumeMounts to host directories prepared by prepareVolumes.
func (p *podRunner) mountsFor(c *container) ([]mount, error) {
	var out []mount
	hasSA := false
	for _, vm := range c.spec.VolumeMounts {
		src := filepath.Join(p.dir, "volumes", vm.Name)
		if hp := p.hostPathOf(vm.Name); hp != "" {
			src = hp
		}
		if _, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("volume %s for mount %s is not prepared: %v", vm.Name, vm.MountPath, err)
		}
		if vm.SubPath != "" {
			src = filepath.Join(src, vm.SubPath)
			_ = os.MkdirAll(src, 0o755)
		}
		if filepath.Clean(vm.MountPath) == saMountPath {
			hasSA = true
		}
		out = append(out, mount{src: src, dst: vm.MountPath, readOnly: vm.ReadOnly})
	}
	if !hasSA && p.automount() && !p.mountsServiceAccount() {
		out = append(out, mount{src: filepath.Join(p.dir, "volumes", "_serviceaccount"), dst: saMountPath, readOnly: true})
	}
	// Last, as a kubelet adds it: this start's termination message file (termination.go).
	if c.termPath != "" && c.spec.TerminationMessagePath != "" {
		out = append(out, mount{src: c.termPath, dst: c.spec.TerminationMessagePath})
	}
	return out, nil
}

// mountsServiceAccount tells whether the pod spec already mounts the token (the
// ServiceAccount admission plugin adds a projected kube-api-access volume).
func (p *podRunner) mountsServiceAccount() bool {
	for _, list := range [][]v1.Container{p.pod.Spec.InitContainers, p.pod.Spec.Containers} {
		for _, c := range list {
			for _, vm := range c.VolumeMounts {
				if filepath.Clean(vm.MountPath) == saMountPath {
					return true
				}
			}
		}
	}
	return false
}

func (p *podRunner) automount() bool {
	return p.pod.Spec.AutomountServiceAccountToken == nil || *p.pod.Spec.AutomountServiceAccountToken
}

func (p *podRunner) hostPathOf(name string) string {
	for _, v := range p.pod.Spec.Volumes {
		if v.Name == name && v.HostPath != nil {
			return v.HostPath.Path
		}
	}
	return ""
}

func writeFileAtomic(dir, name string, data []byte, mode os.FileMode) error {
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// prepareVolumes fills a host directory for each volume the node supports: emptyDir,
// hostPath, configMap, secret, downwardAPI and projected (ServiceAccount token included).
func (p *podRunner) prepareVolumes(ctx context.Context) error {
	a := p.agent
	base := filepath.Join(p.dir, "volumes")
	for _, v := range p.pod.Spec.Volumes {
		dir := filepath.Join(base, v.Name)
		switch {
		case v.HostPath != nil:
			if err := os.MkdirAll(v.HostPath.Path, 0o755); err != nil {
				return err
			}
			continue
		case v.EmptyDir != nil:
		case v.ConfigMap != nil:
			if err := a.writeKeys(ctx, dir, "configmap", p.pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional); err != nil {
				return err
			}
		case v.Secret != nil:
			if err := a.writeKeys(ctx, dir, "secret", p.pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional); err != nil {
				return err
			}
		case v.DownwardAPI != nil:
			if err := p.writeDownward(dir, v.DownwardAPI.Items); err != nil {
				return err
			}
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				var err error
				switch {
				case s.ServiceAccountToken != nil:
					err = p.writeToken(ctx, dir, s.ServiceAccountToken.Path, s.ServiceAccountToken.Audience, s.ServiceAccountToken.ExpirationSeconds)
				case s.ConfigMap != nil:
					err = a.writeKeys(ctx, dir, "configmap", p.pod.Namespace, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional)
				case s.Secret != nil:
					err = a.writeKeys(ctx, dir, "secret", p.pod.Namespace, s.Secret.Name, s.Secret.Items, s.Secret.Optional)
				case s.DownwardAPI != nil:
					err = p.writeDownward(dir, s.DownwardAPI.Items)
				}
				if err != nil {
					return fmt.Errorf("volume %s: %w", v.Name, err)
				}
			}
		default:
			p.logf("volume %s: type not supported by this node, using an empty directory", v.Name)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if p.automount() && !p.mountsServiceAccount() {
		dir := filepath.Join(base, "_serviceaccount")
		if err := p.writeToken(ctx, dir, "token", "", nil); err != nil {
			return err
		}
		if err := writeFileAtomic(dir, "ca.crt", a.caPEM, 0o644); err != nil {
			return err
		}
		if err := writeFileAtomic(dir, "namespace", []byte(p.pod.Namespace), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (p *podRunner) writeDownward(dir string, items []v1.DownwardAPIVolumeFile) error {
	for _, it := range items {
		if it.FieldRef == nil {
			continue
		}
		v, err := fieldPathValue(p.pod, it.FieldRef.FieldPath, p.ip.String())
		if err != nil {
			return err
		}
		if err := writeFileAtomic(dir, it.Path, []byte(v), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// tokenRetryable: whether a failed TokenRequest is tried again rather than failing the pod's
// setup. A kubelet never fails a pod for a volume it cannot set up yet (it retries the mount),
// so everything but the API server's refusal is retried: the ServiceAccount not there yet
// (NotFound, bounded by fetch's deadline), and the API server away (no connection, 5xx, 429,
// timeouts: found by tests/chaos, an API server restart while pods started failed them).
func tokenRetryable(err error) bool { return apierrors.IsNotFound(err) || serverAway(err) }

// serverAway: the request failed because the API server is away or busy (no answer at all, a
// 5xx, 429, a timeout), not because it refused it.
func serverAway(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code >= 500 || code == http.StatusTooManyRequests || apierrors.IsTimeout(err) ||
			apierrors.IsServerTimeout(err)
	}
	return true // no answer at all: connection refused or reset, a timeout
}

// writeToken asks the API server for a token bound to this pod (TokenRequest), retrying
// while the ServiceAccount does not exist yet (up to 60 s) or the API server does not answer
// (until the pod goes), and keeps it fresh at 80% of its lifetime.
func (p *podRunner) writeToken(ctx context.Context, dir, file, audience string, expiration *int64) error {
	sa := p.pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	exp := int64(3607)
	if expiration != nil && *expiration >= 600 {
		exp = *expiration
	}
	var audiences []string
	if audience != "" {
		audiences = []string{audience}
	}
	req := &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: &exp,
		BoundObjectRef: &authv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.pod.Name, UID: p.pod.UID}}}
	fetch := func() (time.Duration, error) {
		deadline := time.Now().Add(60 * time.Second)
		for {
			tr, err := p.agent.client.CoreV1().ServiceAccounts(p.pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
			if err == nil {
				if err := writeFileAtomic(dir, file, []byte(tr.Status.Token), 0o644); err != nil {
					return 0, err
				}
				return time.Until(tr.Status.ExpirationTimestamp.Time) * 8 / 10, nil
			}
			refused := !tokenRetryable(err) || (apierrors.IsNotFound(err) && time.Now().After(deadline))
			if refused || ctx.Err() != nil {
				return 0, fmt.Errorf("token for serviceaccount %s/%s: %w", p.pod.Namespace, sa, err)
			}
			select {
			case <-ctx.Done():
			case <-p.done:
				return 0, fmt.Errorf("token for serviceaccount %s/%s: the pod is gone: %w", p.pod.Namespace, sa, err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	refresh, err := fetch()
	if err != nil {
		return err
	}
	p.logf("serviceaccount %s token written to %s", sa, filepath.Join(dir, file))
	go func() {
		for {
			select {
			case <-p.done:
				return
			case <-time.After(refresh):
			}
			if r, err := fetch(); err != nil {
				p.logf("token refresh: %v", err)
				refresh = time.Minute
			} else {
				refresh = r
			}
		}
	}()
	return nil
}

func (a *agent) writeKeys(ctx context.Context, dir, kind, ns, name string, items []v1.KeyToPath, optional *bool) error {
	var data map[string]string
	if kind == "configmap" && name == "kube-root-ca.crt" {
		// The root CA publisher is not among the test control plane's controllers.
		data = map[string]string{"ca.crt": string(a.caPEM)}
	} else {
		var err error
		data, err = a.lookupAll(ctx, kind, ns, name)
		if err != nil {
			if optional != nil && *optional {
				return os.MkdirAll(dir, 0o755)
			}
			return err
		}
	}
	if len(items) == 0 {
		for k, v := range data {
			if err := writeFileAtomic(dir, k, []byte(v), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("%s %s has no key %s", kind, name, it.Key)
		}
		if err := writeFileAtomic(dir, it.Path, []byte(v), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (a *agent) lookupAll(ctx context.Context, kind, ns, name string) (map[string]string, error) {
	out := map[string]string{}
	if kind == "configmap" {
		cm, err := a.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		for k, v := range cm.Data {
			out[k] = v
		}
		for k, v := range cm.BinaryData {
			out[k] = string(v)
		}
		return out, nil
	}
	s, err := a.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	for k, v := range s.StringData {
		out[k] = v
	}
	return out, nil
}

func (a *agent) lookupKey(ctx context.Context, kind, ns, name, key string) (string, bool, error) {
	all, err := a.lookupAll(ctx, kind, ns, name)
	if err != nil {
		return "", false, err
	}
	v, ok := all[key]
	return v, ok, nil
}

var _ = strings.TrimSpace
