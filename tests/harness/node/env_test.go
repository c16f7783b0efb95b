package main

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExpandVars(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	cases := map[string]string{
		"$(A)-$(B)": "1-two",
		"$(C)":      "$(C)",
		"$$(A)":     "$(A)",
		"cost $5":   "cost $5",
		"$(A":       "$(A",
		"x$":        "x$",
		"$$$(B)":    "$two",
		"plain":     "plain",
	}
	for in, want := range cases {
		if got := expandVars(in, vars); got != want {
			t.Errorf("expandVars(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolveEnv(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1",
		Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"a/b": "c"}},
		Spec: v1.PodSpec{NodeName: "n1"}}
	c := &v1.Container{Env: []v1.EnvVar{
		{Name: "POD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "LBL", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
		{Name: "ANN", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.annotations['a/b']"}}},
		{Name: "ADDR", Value: "$(IP):$(KUBERNETES_SERVICE_PORT)/$(NOPE)"},
	}}
	r := &envResolver{pod: pod, podIP: "10.244.0.7", serviceEnv: []v1.EnvVar{{Name: "KUBERNETES_SERVICE_PORT", Value: "443"}}}
	_, vars, err := r.resolve(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"POD": "p", "IP": "10.244.0.7", "LBL": "x", "ANN": "c", "ADDR": "10.244.0.7:443/$(NOPE)", "HOSTNAME": "p"}
	for k, v := range want {
		if vars[k] != v {
			t.Errorf("%s = %q, want %q", k, vars[k], v)
		}
	}
}
