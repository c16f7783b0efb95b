package main

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// The Eviction API marks a pod DisruptionTarget before deleting it; the node's status writes
// must keep that mark (as a kubelet does) or the operator cannot tell an eviction from a crash.
func TestStatusKeepsConditionsWrittenByOthers(t *testing.T) {
	p := &podRunner{agent: &agent{}, phase: v1.PodRunning, pod: &v1.Pod{}}
	prev := v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.PodReady, Status: v1.ConditionTrue},
		{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "EvictionByEvictionAPI"},
	}}
	st := p.status(prev, "10.0.0.1")
	var disruption, ready int
	for _, c := range st.Conditions {
		switch c.Type {
		case v1.DisruptionTarget:
			disruption++
			if c.Reason != "EvictionByEvictionAPI" || c.Status != v1.ConditionTrue {
				t.Errorf("DisruptionTarget changed: %+v", c)
			}
		case v1.PodReady:
			ready++
		}
	}
	if disruption != 1 || ready != 1 {
		t.Errorf("want one DisruptionTarget and one Ready condition, got %d and %d: %+v", disruption, ready, st.Conditions)
	}
}
