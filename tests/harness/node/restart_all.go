package main

import (
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
)

// RestartAllContainers: a container's exit matched a rule with that action, so every container of
// the pod restarts in place (same pod UID, network namespace, IP and volumes), as kubelet 1.37.2
// does it (k8s.io/kubernetes v1.37.2):
//
//  1. The status that starts it shows the trigger terminated with its exit code and the condition
//     AllContainersRestarting True (pkg/kubelet/status/generate.go).
//  2. Every running container is stopped, one after another: the main containers, then the init
//     containers (sidecars), each in spec order; no preStop hook, SIGTERM and SIGKILL after 2 s
//     (kuberuntime_manager.go computePodActions and SyncPod: gracePeriod 0, raised to the
//     minimum of 2 s by killContainer). What these stops look like is never published: the
//     kubelet removes the containers within the same sync. Their exits trigger no rule.
//  3. The next status shows the condition False and each container that had been running or
//     terminated waiting (RestartingAllContainers) with restartCount+1 and
//     lastState.terminated {exitCode 137, reason RestartingAllContainers} — the trigger too: its
//     exit code is in the status of step 1 only (kubelet_pods.go convertToAPIContainerStatuses).
//     A container that was waiting keeps its count and last state.
//  4. The containers start as on the pod's first start: regular init containers in order,
//     sidecars (each waiting for its startupProbe), then the main containers; no crash-loop
//     back-off applies. The Initialized condition stays True; the phase is the kubelet's
//     (phaseWhileRestartingAll), never Failed or Succeeded because of the restart.

const (
	reasonRestartingAll  = "RestartingAllContainers"
	messageRestartingAll = "The container is removed because RestartAllContainers in place"
	restartAllStopGrace  = 2 * time.Second
	// A kubelet sees container exits on its 1 s relist; one in-place restart a second at most
	// keeps a pod whose trigger fails at once from spinning.
	restartAllMinInterval = time.Second
)

// restartAllTriggerLocked: the container whose latest exit matches a RestartAllContainers rule.
func (p *podRunner) restartAllTriggerLocked() *container {
	for _, c := range p.containers {
		if c.terminated && !c.running && triggersRestartAll(&c.spec, c.exitCode, p.agent.restartAll) {
			return c
		}
	}
	return nil
}

// beginRestartAllLocked starts step 1 and 2. The stops begin with the next event, so that the
// status of step 1 is published first.
func (p *podRunner) beginRestartAllLocked(trigger *container) {
	p.logf("container %s exited with code %d, which its rule answers with RestartAllContainers: restarting every container in place",
		trigger.spec.Name, trigger.exitCode)
	p.resetting, p.restartingAll, p.resetPublished = true, true, false
	p.resetQueue = p.resetQueue[:0]
	for _, kind := range []containerKind{kindMain, kindInit} {
		for _, c := range p.containers {
			if (kind == kindMain) != (c.kind == kindMain) {
				continue
			}
			c.bumpOnReset = c.running || (c.terminated && !c.restartDue)
			c.restartSeq++ // a back-off timer still pending is void
			if c.running {
				p.resetQueue = append(p.resetQueue, c)
			}
		}
	}
	go p.send(event{kind: evWake})
}

// stepRestartAllLocked stops the next container of step 2, or ends it once none runs.
func (p *podRunner) stepRestartAllLocked() {
	for len(p.resetQueue) > 0 {
		c := p.resetQueue[0]
		if !c.running {
			p.resetQueue = p.resetQueue[1:]
			continue
		}
		if !c.resetSignalled {
			c.resetSignalled = true
			p.logf("container %s: SIGTERM (RestartAllContainers, SIGKILL after %v)", c.spec.Name, restartAllStopGrace)
			_ = syscall.Kill(-c.pid, syscall.SIGTERM)
			pid := c.pid
			time.AfterFunc(restartAllStopGrace, func() { p.send(event{kind: evStopTimeout, c: c, pid: pid}) })
		}
		return
	}
	p.finishRestartAllLocked()
}

// finishRestartAllLocked is step 3; the next event (evWake) starts step 4.
func (p *podRunner) finishRestartAllLocked() {
	for _, c := range p.containers {
		if c.bumpOnReset {
			c.last = &v1.ContainerStateTerminated{ExitCode: 137, Reason: reasonRestartingAll, Message: messageRestartingAll}
			c.restartCount++
			c.waitReason, c.waitMessage = reasonRestartingAll, messageRestartingAll
		} else {
			c.waitReason, c.waitMessage = p.initialWaitReason(), ""
		}
		c.terminated, c.restartDue, c.everStarted, c.ready, c.started = false, false, false, false, false
		c.resetSignalled, c.bumpOnReset = false, false
	}
	p.initialized, p.resetting, p.restartingAll = false, false, false
	p.restartRound, p.resetShown = true, true
	p.lastReset = time.Now()
	p.logf("RestartAllContainers: every container stopped; starting them again")
	go p.send(event{kind: evWake})
}

// statusHeld: between the status that starts a RestartAllContainers and the one that ends its
// stops nothing is published, as a kubelet's sync stops and removes them in one go.
func (p *podRunner) statusHeld() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resetting && p.resetPublished
}

func (p *podRunner) notePublished() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resetting {
		p.resetPublished = true
	}
}

// initialWaitReason is what a container that has not started yet waits for, as a kubelet says it.
func (p *podRunner) initialWaitReason() string {
	if len(p.pod.Spec.InitContainers) > 0 {
		return "PodInitializing"
	}
	return "ContainerCreating"
}

// afterResetShownLocked: once the status of step 3 is out, the containers that have not started
// again wait as on a first start (the kubelet's next status no longer finds the pod restarting).
func (p *podRunner) afterResetShownLocked() {
	p.resetShown = false
	for _, c := range p.containers {
		if !c.running && c.waitReason == reasonRestartingAll {
			c.waitReason, c.waitMessage = p.initialWaitReason(), ""
		}
	}
}

// phaseWhileRestartingAll is the phase a kubelet reports from step 3 until the main containers
// run again (its getPhase, pkg/kubelet/kubelet_pods.go): Pending while a regular init container
// runs or has not run, while a sidecar waits without a last state, or while a sidecar has not
// passed its startupProbe and no main container has started since the restart; else Running
// (a container waiting with its RestartingAllContainers termination is restarting, not failed).
func phaseWhileRestartingAll(spec *v1.PodSpec, init, main []v1.ContainerStatus, mainStarted bool) v1.PodPhase {
	sidecar := map[string]bool{}
	for _, c := range spec.InitContainers {
		sidecar[c.Name] = c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
	}
	waitingFresh := func(s v1.ContainerStatus) bool {
		return s.State.Waiting != nil && s.LastTerminationState.Terminated == nil
	}
	pending, sidecarUnstarted := false, false
	for _, s := range init {
		switch {
		case !sidecar[s.Name]:
			pending = pending || s.State.Running != nil || waitingFresh(s)
		case waitingFresh(s):
			pending = true
		case s.State.Running != nil && (s.Started == nil || !*s.Started):
			sidecarUnstarted = true
		}
	}
	for _, s := range main {
		pending = pending || waitingFresh(s)
	}
	if pending || (sidecarUnstarted && !mainStarted) {
		return v1.PodPending
	}
	return v1.PodRunning
}
