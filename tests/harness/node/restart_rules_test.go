package main

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func rule(action v1.ContainerRestartRuleAction, op v1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) v1.ContainerRestartRule {
	return v1.ContainerRestartRule{Action: action, ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
}

func policy(p v1.ContainerRestartPolicy) *v1.ContainerRestartPolicy { return &p }

const (
	restart    = v1.ContainerRestartRuleActionRestart
	restartAll = v1.ContainerRestartRuleActionRestartAllContainers
	in         = v1.ContainerRestartRuleOnExitCodesOpIn
	notIn      = v1.ContainerRestartRuleOnExitCodesOpNotIn
)

func TestMatchingRuleTakesTheFirstMatch(t *testing.T) {
	c := &v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyNever), RestartPolicyRules: []v1.ContainerRestartRule{
		{Action: restart}, // no exitCodes: never matches
		rule(restart, "Between", 3),
		rule(restart, in, 1, 2),
		rule(restartAll, notIn, 0),
		rule(restart, in, 3), // shadowed by the NotIn [0] above
	}}
	for code, want := range map[int32]v1.ContainerRestartRuleAction{0: "", 1: restart, 2: restart, 3: restartAll, 137: restartAll} {
		r, ok := matchingRule(c, code)
		if got := r.Action; ok != (want != "") || got != want {
			t.Errorf("exit %d: got rule %q (matched %v), want %q", code, got, ok, want)
		}
	}
}

func TestShouldRestartRulesThenContainerThenPod(t *testing.T) {
	tests := []struct {
		name       string
		c          v1.Container
		pod        v1.RestartPolicy
		code       int32
		restartAll bool
		want       bool
	}{
		{"pod Always", v1.Container{}, v1.RestartPolicyAlways, 0, true, true},
		{"pod default is Always", v1.Container{}, "", 0, true, true},
		{"pod OnFailure, exit 0", v1.Container{}, v1.RestartPolicyOnFailure, 0, true, false},
		{"pod OnFailure, exit 1", v1.Container{}, v1.RestartPolicyOnFailure, 1, true, true},
		{"pod Never", v1.Container{}, v1.RestartPolicyNever, 1, true, false},
		{"container Never over pod Always", v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyNever)}, v1.RestartPolicyAlways, 1, true, false},
		{"container OnFailure over pod Never", v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyOnFailure)}, v1.RestartPolicyNever, 2, true, true},
		{"rule Restart over container Never", v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyNever),
			RestartPolicyRules: []v1.ContainerRestartRule{rule(restart, in, 42)}}, v1.RestartPolicyNever, 42, true, true},
		{"no rule matches: container Never", v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyNever),
			RestartPolicyRules: []v1.ContainerRestartRule{rule(restart, in, 42)}}, v1.RestartPolicyAlways, 1, true, false},
		{"no rule matches: container Always", v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyAlways),
			RestartPolicyRules: []v1.ContainerRestartRule{rule(restart, in, 42)}}, v1.RestartPolicyNever, 0, true, true},
		{"rule RestartAllContainers counts as a restart", v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyNever),
			RestartPolicyRules: []v1.ContainerRestartRule{rule(restartAll, notIn, 0)}}, v1.RestartPolicyNever, 3, true, true},
		{"RestartAllContainers with the feature off: container policy", v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyNever),
			RestartPolicyRules: []v1.ContainerRestartRule{rule(restartAll, notIn, 0)}}, v1.RestartPolicyAlways, 3, false, false},
		{"rules without a container policy are not read", v1.Container{
			RestartPolicyRules: []v1.ContainerRestartRule{rule(restart, in, 42)}}, v1.RestartPolicyNever, 42, true, false},
	}
	for _, tt := range tests {
		if got := shouldRestart(&tt.c, tt.pod, tt.code, tt.restartAll); got != tt.want {
			t.Errorf("%s: shouldRestart = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestActionOnExitPerContainerKind(t *testing.T) {
	allOn85 := []v1.ContainerRestartRule{rule(restartAll, in, 85)}
	sidecar := v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyAlways), RestartPolicyRules: allOn85}
	trainer := v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyNever),
		RestartPolicyRules: []v1.ContainerRestartRule{rule(restartAll, notIn, 0)}}
	tests := []struct {
		name       string
		c          v1.Container
		kind       containerKind
		pod        v1.RestartPolicy
		code       int32
		restartAll bool
		want       exitAction
	}{
		{"sidecar exits 85: all", sidecar, kindSidecar, v1.RestartPolicyNever, 85, true, exitRestartAll},
		{"sidecar exits 1: itself", sidecar, kindSidecar, v1.RestartPolicyNever, 1, true, exitRestart},
		{"sidecar exits 0: itself", sidecar, kindSidecar, v1.RestartPolicyNever, 0, true, exitRestart},
		{"sidecar exits 85, feature off: itself", sidecar, kindSidecar, v1.RestartPolicyNever, 85, false, exitRestart},
		{"trainer exits 3: all", trainer, kindMain, v1.RestartPolicyNever, 3, true, exitRestartAll},
		{"trainer exits 0: done", trainer, kindMain, v1.RestartPolicyNever, 0, true, exitStays},
		{"trainer exits 3, feature off: container Never", trainer, kindMain, v1.RestartPolicyAlways, 3, false, exitStays},
		{"init exits 0: done whatever the policy", v1.Container{}, kindInit, v1.RestartPolicyAlways, 0, true, exitStays},
		{"init fails, pod Never", v1.Container{}, kindInit, v1.RestartPolicyNever, 1, true, exitStays},
		{"init fails, pod OnFailure", v1.Container{}, kindInit, v1.RestartPolicyOnFailure, 1, true, exitRestart},
		{"init fails, rule Restart over pod Never", v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyNever),
			RestartPolicyRules: []v1.ContainerRestartRule{rule(restart, in, 7)}}, kindInit, v1.RestartPolicyNever, 7, true, exitRestart},
		{"init fails, rule RestartAllContainers", v1.Container{RestartPolicy: policy(v1.ContainerRestartPolicyNever),
			RestartPolicyRules: []v1.ContainerRestartRule{rule(restartAll, in, 42)}}, kindInit, v1.RestartPolicyNever, 42, true, exitRestartAll},
	}
	for _, tt := range tests {
		if got := actionOnExit(&tt.c, tt.kind, tt.pod, tt.code, tt.restartAll); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAllContainersCouldRestart(t *testing.T) {
	plain := v1.PodSpec{Containers: []v1.Container{{RestartPolicy: policy(v1.ContainerRestartPolicyNever),
		RestartPolicyRules: []v1.ContainerRestartRule{rule(restart, in, 1)}}}}
	if allContainersCouldRestart(&plain) {
		t.Error("a pod with only Restart rules has no AllContainersRestarting condition")
	}
	withSidecar := v1.PodSpec{InitContainers: []v1.Container{{RestartPolicy: policy(v1.ContainerRestartPolicyAlways),
		RestartPolicyRules: []v1.ContainerRestartRule{rule(restartAll, in, 85)}}}}
	if !allContainersCouldRestart(&withSidecar) {
		t.Error("a sidecar's RestartAllContainers rule gives the pod the condition")
	}
}

// The kubelet's delays between quick restarts: none for the first, then initial doubling to max;
// a container that ran longer than 10 minutes starts over.
func TestCrashLoopBackOffLikeTheKubelet(t *testing.T) {
	b := newCrashLoopBackOff(10*time.Second, 300*time.Second)
	t0 := time.Unix(1_000_000, 0)
	wait, delay := b.next("c", t0, t0)
	if wait != 0 || delay != 10*time.Second {
		t.Fatalf("first restart: wait %v delay %v, want 0 and 10s", wait, delay)
	}
	now := t0
	var waits []time.Duration
	for range 7 {
		finished := now.Add(time.Second) // each run lasts a second
		wait, _ := b.next("c", finished, finished)
		waits = append(waits, wait)
		if again, _ := b.next("c", finished, finished.Add(wait/2)); again != wait/2 {
			t.Fatalf("half way through the back-off: wait %v, want %v", again, wait/2)
		}
		now = finished.Add(wait)
		if w, _ := b.next("c", finished, now); w != 0 {
			t.Fatalf("back-off over: wait %v, want 0", w)
		}
	}
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300}
	for i := range want {
		if waits[i] != want[i]*time.Second {
			t.Fatalf("waits %v, want %v seconds", waits, want)
		}
	}
	if w, _ := b.next("other", now, now); w != 0 {
		t.Fatalf("another container has its own back-off: wait %v", w)
	}
	finished := now.Add(601 * time.Second) // ran past the reset
	if wait, delay := b.next("c", finished, finished); wait != 0 || delay != 10*time.Second {
		t.Fatalf("after 10 minutes running: wait %v delay %v, want 0 and 10s", wait, delay)
	}

	capped := newCrashLoopBackOff(10*time.Second, 2*time.Second)
	capped.next("c", t0, t0)
	if wait, _ := capped.next("c", t0.Add(time.Second), t0.Add(time.Second)); wait != 2*time.Second {
		t.Fatalf("max below initial caps both, as the kubelet's newCrashLoopBackOff: wait %v, want 2s", wait)
	}
}

func TestPhaseWhileRestartingAll(t *testing.T) {
	spec := &v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init"}, {Name: "sidecar", RestartPolicy: policy(v1.ContainerRestartPolicyAlways)}},
		Containers:     []v1.Container{{Name: "main"}},
	}
	last := v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, Reason: reasonRestartingAll}}
	waiting := func(name string, withLast bool) v1.ContainerStatus {
		s := v1.ContainerStatus{Name: name, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: reasonRestartingAll}}}
		if withLast {
			s.LastTerminationState = last
		}
		return s
	}
	running := func(name string, started bool) v1.ContainerStatus {
		return v1.ContainerStatus{Name: name, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}},
			Started: &started, LastTerminationState: last}
	}
	done := v1.ContainerStatus{Name: "init", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{}}, LastTerminationState: last}
	tests := []struct {
		name        string
		init, main  []v1.ContainerStatus
		mainStarted bool
		want        v1.PodPhase
	}{
		{"all stopped, each with its last state", []v1.ContainerStatus{waiting("init", true), waiting("sidecar", true)},
			[]v1.ContainerStatus{waiting("main", true)}, false, v1.PodRunning},
		{"init container runs again", []v1.ContainerStatus{running("init", true), waiting("sidecar", true)},
			[]v1.ContainerStatus{waiting("main", true)}, false, v1.PodPending},
		{"sidecar before its startupProbe", []v1.ContainerStatus{done, running("sidecar", false)},
			[]v1.ContainerStatus{waiting("main", true)}, false, v1.PodPending},
		{"sidecar started", []v1.ContainerStatus{done, running("sidecar", true)},
			[]v1.ContainerStatus{waiting("main", true)}, false, v1.PodRunning},
		{"main started, sidecar restarting", []v1.ContainerStatus{done, running("sidecar", false)},
			[]v1.ContainerStatus{running("main", true)}, true, v1.PodRunning},
		{"a main container that never ran", []v1.ContainerStatus{done, running("sidecar", true)},
			[]v1.ContainerStatus{waiting("main", false)}, false, v1.PodPending},
	}
	for _, tt := range tests {
		if got := phaseWhileRestartingAll(spec, tt.init, tt.main, tt.mainStarted); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
