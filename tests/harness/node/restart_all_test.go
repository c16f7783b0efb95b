package main

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// sleeper starts a process in its own group, as startLocked does, and reports its exit.
func sleeper(t *testing.T) (pid int, exited <-chan int32) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan int32, 1)
	go func() {
		_ = cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		code := int32(ws.ExitStatus())
		if ws.Signaled() {
			code = 128 + int32(ws.Signal())
		}
		ch <- code
	}()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd.Process.Pid, ch
}

func findStatus(list []v1.ContainerStatus, name string) v1.ContainerStatus {
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	return v1.ContainerStatus{}
}

func restartingStatus(st v1.PodStatus) v1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == v1.AllContainersRestarting {
			return c.Status
		}
	}
	return "absent"
}

// A trainer exits 3 under a RestartAllContainers rule while its sidecar and a second main
// container run: the first status shows the exit and the condition True; the others are stopped
// with SIGTERM, main containers first, and their stops trigger no rule (the second main container
// would match its own rule with 143); then every container waits with restartCount 1 and the
// kubelet's lastState (137, RestartingAllContainers and its message, the trigger's termination
// message gone), the condition is False, the pod Running and still Initialized.
func TestRestartAllContainersStopsEveryContainerOnce(t *testing.T) {
	ctx := context.Background()
	allButZero := []v1.ContainerRestartRule{rule(restartAll, notIn, 0)}
	spec := v1.PodSpec{
		RestartPolicy:  v1.RestartPolicyNever,
		InitContainers: []v1.Container{{Name: "init"}, {Name: "sidecar", RestartPolicy: policy(v1.ContainerRestartPolicyAlways)}},
		Containers: []v1.Container{
			{Name: "trainer", RestartPolicy: policy(v1.ContainerRestartPolicyNever), RestartPolicyRules: allButZero,
				TerminationMessagePath: "/dev/termination-log"},
			{Name: "helper", RestartPolicy: policy(v1.ContainerRestartPolicyNever), RestartPolicyRules: allButZero},
		},
	}
	sidecarPid, sidecarExit := sleeper(t)
	helperPid, helperExit := sleeper(t)
	init := &container{spec: spec.InitContainers[0], kind: kindInit, everStarted: true, terminated: true, termReason: "Completed"}
	sidecar := &container{spec: spec.InitContainers[1], kind: kindSidecar, everStarted: true, running: true, pid: sidecarPid, started: true, ready: true}
	trainer := &container{spec: spec.Containers[0], kind: kindMain, everStarted: true, running: true, pid: 1 << 30,
		termPath: writeTemp(t, "termination", []byte("rank 3 stalled"))}
	helper := &container{spec: spec.Containers[1], kind: kindMain, everStarted: true, running: true, pid: helperPid, started: true, ready: true}
	p := &podRunner{agent: &agent{stateDir: t.TempDir(), restartAll: true}, phase: v1.PodRunning, initialized: true, everInitialized: true,
		pod: &v1.Pod{Spec: spec}, containers: []*container{init, sidecar, trainer, helper},
		events: make(chan event, 16), done: make(chan struct{})}
	defer close(p.done)

	p.handle(ctx, event{kind: evExit, c: trainer, pid: trainer.pid, exitCode: 3})
	p.advance(ctx)
	st := p.status(v1.PodStatus{}, "10.0.0.1")
	if restartingStatus(st) != v1.ConditionTrue || st.Phase != v1.PodRunning {
		t.Fatalf("after the trigger: want AllContainersRestarting True and Running, got %s and %s", restartingStatus(st), st.Phase)
	}
	if term := findStatus(st.ContainerStatuses, "trainer").State.Terminated; term == nil || term.ExitCode != 3 || term.Message != "rank 3 stalled" {
		t.Fatalf("the trigger's exit is in the status that starts the restart: %+v", findStatus(st.ContainerStatuses, "trainer").State)
	}
	if findStatus(st.ContainerStatuses, "helper").State.Running == nil {
		t.Fatal("the others still run in the status that starts the restart")
	}
	if p.statusHeld() {
		t.Fatal("the status that starts the restart must go out")
	}
	p.notePublished()
	if !p.statusHeld() {
		t.Fatal("the stops are not published")
	}

	p.advance(ctx) // the wake-up: stops the first container, the helper (main containers first)
	code := <-helperExit
	if code != 128+int32(syscall.SIGTERM) {
		t.Fatalf("helper: exit %d, want SIGTERM's 143", code)
	}
	select {
	case <-sidecarExit:
		t.Fatal("the sidecar was stopped before the main containers were")
	case <-time.After(200 * time.Millisecond):
	}
	p.handle(ctx, event{kind: evExit, c: helper, pid: helperPid, exitCode: code})
	p.advance(ctx) // the helper's 143 matches its rule: no second restart; next stop: the sidecar
	if code := <-sidecarExit; code != 143 {
		t.Fatalf("sidecar: exit %d, want 143", code)
	}
	p.handle(ctx, event{kind: evExit, c: sidecar, pid: sidecarPid, exitCode: 143})
	p.advance(ctx) // nothing runs: the reset is done
	if p.statusHeld() || p.resetting {
		t.Fatal("the restart should have finished its stops")
	}

	st = p.status(v1.PodStatus{}, "10.0.0.1")
	if restartingStatus(st) != v1.ConditionFalse || st.Phase != v1.PodRunning {
		t.Fatalf("after the stops: want AllContainersRestarting False and Running, got %s and %s", restartingStatus(st), st.Phase)
	}
	for _, s := range append(st.InitContainerStatuses, st.ContainerStatuses...) {
		last := s.LastTerminationState.Terminated
		// The trigger's own message was in the status that started it only, as its exit code.
		if s.RestartCount != 1 || last == nil || last.ExitCode != 137 || last.Reason != reasonRestartingAll || last.Message != messageRestartingAll ||
			s.State.Waiting == nil || s.State.Waiting.Reason != reasonRestartingAll || s.Ready {
			t.Errorf("container %s: want waiting RestartingAllContainers, restartCount 1, lastState 137 RestartingAllContainers; got %+v", s.Name, s)
		}
	}
	for _, c := range st.Conditions {
		if c.Type == v1.PodInitialized && c.Status != v1.ConditionTrue {
			t.Errorf("Initialized stays True through an in-place restart: %+v", c)
		}
	}
	if p.initialized || init.terminated || trainer.everStarted {
		t.Error("the containers must start again from the first init container")
	}
}

// Rules are not read while the pod is being deleted.
func TestNoRestartAllWhileDeleting(t *testing.T) {
	c := &container{spec: v1.Container{Name: "trainer", RestartPolicy: policy(v1.ContainerRestartPolicyNever),
		RestartPolicyRules: []v1.ContainerRestartRule{rule(restartAll, notIn, 0)}}, kind: kindMain,
		everStarted: true, terminated: true, exitCode: 143}
	p := &podRunner{agent: &agent{restartAll: true}, phase: v1.PodRunning, initialized: true, deleting: true,
		pod: &v1.Pod{}, containers: []*container{c}, events: make(chan event, 4), done: make(chan struct{})}
	defer close(p.done)
	p.advance(context.Background())
	if p.resetting || p.restartingAll {
		t.Fatal("a pod being deleted must not restart in place")
	}
}

// The condition is the kubelet's on a pod with a RestartAllContainers rule, and only on a node
// that declares the feature (a kubelet with the gate off does not report it).
func TestRestartingConditionNeedsTheRuleAndTheFeature(t *testing.T) {
	withRule := v1.PodSpec{Containers: []v1.Container{{Name: "trainer", RestartPolicy: policy(v1.ContainerRestartPolicyNever),
		RestartPolicyRules: []v1.ContainerRestartRule{rule(restartAll, notIn, 0)}}}}
	for _, tt := range []struct {
		spec       v1.PodSpec
		restartAll bool
		phase      v1.PodPhase
		want       string
	}{
		{withRule, true, v1.PodRunning, "False/"},
		{withRule, true, v1.PodFailed, "False/PodFailed"},
		{withRule, false, v1.PodRunning, "absent"},
		{v1.PodSpec{Containers: []v1.Container{{Name: "trainer"}}}, true, v1.PodRunning, "absent"},
	} {
		p := &podRunner{agent: &agent{restartAll: tt.restartAll}, phase: tt.phase, pod: &v1.Pod{Spec: tt.spec}}
		got := "absent"
		for _, c := range p.status(v1.PodStatus{}, "10.0.0.1").Conditions {
			if c.Type == v1.AllContainersRestarting {
				got = string(c.Status) + "/" + c.Reason
			}
		}
		if got != tt.want {
			t.Errorf("feature %v, phase %s, rules %d: condition %s, want %s", tt.restartAll, tt.phase,
				len(tt.spec.Containers[0].RestartPolicyRules), got, tt.want)
		}
	}
}

// A back-off timer set before an in-place restart must not start its container afterwards (the
// restart starts every container in order itself).
func TestRestartTimerFromBeforeRestartAllIsVoid(t *testing.T) {
	c := &container{spec: v1.Container{Name: "sidecar"}, kind: kindSidecar, everStarted: true, terminated: true, restartDue: true, restartSeq: 1}
	p := &podRunner{agent: &agent{}, phase: v1.PodRunning, pod: &v1.Pod{}, containers: []*container{c}}
	p.handle(context.Background(), event{kind: evRestart, c: c, seq: 0})
	if !c.restartDue || c.running {
		t.Fatal("a void restart timer started the container")
	}
}
