package main

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// expandVars replaces $(NAME) with vars[NAME] the way Kubernetes does for command, args and
// env values: an unknown name is left as written, and "$$" escapes a literal "$".
func expandVars(in string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '$' || i+1 >= len(in) {
			b.WriteByte(c)
			continue
		}
		next := in[i+1]
		switch next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(in[i+2:], ')')
			if end < 0 {
				b.WriteString(in[i:])
				return b.String()
			}
			name := in[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// fieldPathValue resolves the downward API field paths a kubelet supports for env vars.
func fieldPathValue(pod *v1.Pod, path, podIP string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return podIP, nil
	case "status.podIPs":
		return podIP, nil
	case "status.hostIP", "status.hostIPs":
		return pod.Status.HostIP, nil
	}
	for _, prefix := range []string{"metadata.labels", "metadata.annotations"} {
		if strings.HasPrefix(path, prefix+"['") && strings.HasSuffix(path, "']") {
			key := path[len(prefix)+2 : len(path)-2]
			if prefix == "metadata.labels" {
				return pod.Labels[key], nil
			}
			return pod.Annotations[key], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// lookupFunc fetches a key of a ConfigMap or Secret (kind is "configmap" or "secret").
type lookupFunc func(ctx context.Context, kind, namespace, name, key string) (string, bool, error)

// lookupAllFunc fetches all keys of a ConfigMap or Secret for envFrom.
type lookupAllFunc func(ctx context.Context, kind, namespace, name string) (map[string]string, error)

type envResolver struct {
	pod        *v1.Pod
	podIP      string
	serviceEnv []v1.EnvVar // KUBERNETES_SERVICE_HOST and friends, visible to $(VAR) as in Kubernetes
	lookup     lookupFunc
	lookupAll  lookupAllFunc
}

// resolve returns the container's environment in order (later entries win) and the map
// used for $(VAR) expansion in command and args.
func (r *envResolver) resolve(ctx context.Context, c *v1.Container) ([]string, map[string]string, error) {
	vars := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, e := range r.serviceEnv {
		set(e.Name, e.Value)
	}
	for _, from := range c.EnvFrom {
		var kind, name string
		optional := false
		switch {
		case from.ConfigMapRef != nil:
			kind, name = "configmap", from.ConfigMapRef.Name
			optional = from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional
		case from.SecretRef != nil:
			kind, name = "secret", from.SecretRef.Name
			optional = from.SecretRef.Optional != nil && *from.SecretRef.Optional
		default:
			continue
		}
		all, err := r.lookupAll(ctx, kind, r.pod.Namespace, name)
		if err != nil {
			if optional {
				continue
			}
			return nil, nil, fmt.Errorf("envFrom %s %s: %w", kind, name, err)
		}
		for k, v := range all {
			set(from.Prefix+k, v)
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			set(e.Name, expandVars(e.Value, vars))
		case e.ValueFrom.FieldRef != nil:
			v, err := fieldPathValue(r.pod, e.ValueFrom.FieldRef.FieldPath, r.podIP)
			if err != nil {
				return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			set(e.Name, v)
		case e.ValueFrom.ConfigMapKeyRef != nil || e.ValueFrom.SecretKeyRef != nil:
			kind, name, key, optional := "configmap", "", "", false
			if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
				name, key, optional = ref.Name, ref.Key, ref.Optional != nil && *ref.Optional
			} else {
				ref := e.ValueFrom.SecretKeyRef
				kind, name, key, optional = "secret", ref.Name, ref.Key, ref.Optional != nil && *ref.Optional
			}
			v, found, err := r.lookup(ctx, kind, r.pod.Namespace, name, key)
			if err != nil || !found {
				if optional {
					continue
				}
				return nil, nil, fmt.Errorf("env %s: %s %s key %s not available (%v)", e.Name, kind, name, key, err)
			}
			set(e.Name, v)
		case e.ValueFrom.ResourceFieldRef != nil:
			set(e.Name, resourceFieldValue(c, e.ValueFrom.ResourceFieldRef))
		}
	}
	if _, ok := vars["PATH"]; !ok {
		set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	if _, ok := vars["HOSTNAME"]; !ok {
		set("HOSTNAME", r.pod.Name)
	}
	env := make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vars[k])
	}
	return env, vars, nil
}

// resourceFieldValue gives limits/requests as plain numbers (cpu rounded up to whole cores,
// memory in bytes), which is what the kubelet does with the default divisor.
func resourceFieldValue(c *v1.Container, ref *v1.ResourceFieldSelector) string {
	parts := strings.SplitN(ref.Resource, ".", 2)
	if len(parts) != 2 {
		return ""
	}
	list := c.Resources.Limits
	if parts[0] == "requests" {
		list = c.Resources.Requests
	}
	q, ok := list[v1.ResourceName(parts[1])]
	if !ok {
		return ""
	}
	if parts[1] == "cpu" {
		return fmt.Sprint((q.MilliValue() + 999) / 1000)
	}
	return fmt.Sprint(q.Value())
}
