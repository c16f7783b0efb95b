package main

import (
	"context"
	"os/exec"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// A kubelet reports a pod Succeeded only once its sidecars have stopped as well, with their
// terminated states in the same status: while a sidecar handles its SIGTERM the pod is still
// Running (seen on the real kubelet of tests/harness/realnode; testnode used to report Succeeded at
// once, with the sidecar still running).
func TestPhaseWaitsUntilSidecarsStopped(t *testing.T) {
	ctx := context.Background()
	proc := exec.Command("sleep", "60")
	proc.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proc.Process.Kill() }()
	sidecar := &container{spec: v1.Container{Name: "sidecar"}, kind: kindSidecar, everStarted: true,
		running: true, pid: proc.Process.Pid, started: true, ready: true}
	trainer := &container{spec: v1.Container{Name: "trainer"}, kind: kindMain, everStarted: true,
		terminated: true, termReason: "Completed"}
	p := &podRunner{agent: &agent{stateDir: t.TempDir()}, phase: v1.PodRunning, initialized: true,
		pod:        &v1.Pod{Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyNever}},
		containers: []*container{sidecar, trainer}}

	p.advance(ctx) // the trainer has ended: the sidecar gets SIGTERM
	st := p.status(v1.PodStatus{}, "10.0.0.1")
	if st.Phase != v1.PodRunning || st.InitContainerStatuses[0].State.Running == nil {
		t.Fatalf("while the sidecar stops: want phase Running with the sidecar running, got %s, %+v",
			st.Phase, st.InitContainerStatuses[0].State)
	}
	err := proc.Wait()
	ws, _ := proc.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the sidecar was not stopped with SIGTERM: %v", err)
	}
	p.handle(ctx, event{kind: evExit, c: sidecar, pid: sidecar.pid, exitCode: 143, signaled: true})
	p.advance(ctx)
	st = p.status(v1.PodStatus{}, "10.0.0.1")
	if st.Phase != v1.PodSucceeded {
		t.Fatalf("all containers stopped, trainer exit 0: want Succeeded, got %s", st.Phase)
	}
	if term := st.InitContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 143 {
		t.Fatalf("want the sidecar terminated (143) in the Succeeded status, got %+v", st.InitContainerStatuses[0].State)
	}
}
