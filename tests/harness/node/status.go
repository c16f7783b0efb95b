package main

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }

func condition(t v1.PodConditionType, ok bool, reason string, prev []v1.PodCondition) v1.PodCondition {
	status := v1.ConditionFalse
	if ok {
		status = v1.ConditionTrue
		reason = ""
	}
	c := v1.PodCondition{Type: t, Status: status, Reason: reason, LastTransitionTime: metav1.Now()}
	for _, p := range prev {
		if p.Type == t && p.Status == status {
			c.LastTransitionTime = p.LastTransitionTime
		}
	}
	return c
}

func (p *podRunner) containerStatus(c *container) v1.ContainerStatus {
	s := v1.ContainerStatus{Name: c.spec.Name, Image: c.spec.Image, ImageID: c.spec.Image, RestartCount: c.restartCount,
		LastTerminationState: v1.ContainerState{Terminated: c.last}}
	ready, started := c.ready, c.started
	s.Ready, s.Started = ready, &started
	switch {
	case c.running:
		s.ContainerID = p.containerID(c)
		s.State.Running = &v1.ContainerStateRunning{StartedAt: metaTime(c.startedAt)}
	case c.terminated && !c.restartDue:
		s.ContainerID = p.containerID(c)
		s.State.Terminated = &v1.ContainerStateTerminated{ExitCode: c.exitCode, Reason: c.termReason, Message: c.termMessage,
			StartedAt: metaTime(c.startedAt), FinishedAt: metaTime(c.finishedAt), ContainerID: s.ContainerID}
	default:
		if c.terminated && c.restartDue {
			s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: c.exitCode, Reason: c.termReason,
				Message: c.termMessage, StartedAt: metaTime(c.startedAt), FinishedAt: metaTime(c.finishedAt), ContainerID: p.containerID(c)}
		}
		s.State.Waiting = &v1.ContainerStateWaiting{Reason: c.waitReason, Message: c.waitMessage}
	}
	return s
}

// status renders the pod's status the way a kubelet reports it.
func (p *podRunner) status(prev v1.PodStatus, hostIP string) v1.PodStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := v1.PodStatus{Phase: p.phase, Reason: p.reason, Message: p.message, HostIP: hostIP,
		HostIPs: []v1.HostIP{{IP: hostIP}}, QOSClass: v1.PodQOSBestEffort}
	if prev.QOSClass != "" {
		st.QOSClass = prev.QOSClass
	}
	start := metaTime(p.startTime)
	st.StartTime = &start
	if p.ip != nil {
		st.PodIP = p.ip.String()
		st.PodIPs = []v1.PodIP{{IP: st.PodIP}}
	}
	allReady := true
	for _, c := range p.containers {
		cs := p.containerStatus(c)
		if c.kind == kindMain {
			st.ContainerStatuses = append(st.ContainerStatuses, cs)
		} else {
			st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
		}
		if (c.kind == kindMain || c.kind == kindSidecar) && !cs.Ready {
			allReady = false
		}
	}
	limitTerminationMessages(&p.pod.Spec, &st)
	ending := p.phase == v1.PodSucceeded || p.phase == v1.PodFailed
	notReadyReason := "ContainersNotReady"
	if ending {
		notReadyReason = "PodCompleted"
		allReady = false
	}
	initReason := "ContainersNotInitialized"
	if ending && !p.initialized {
		initReason = "PodCompleted"
	}
	if p.restartRound && !p.stopping && !p.finished {
		mainStarted := false
		for _, c := range p.containers {
			mainStarted = mainStarted || (c.kind == kindMain && c.everStarted)
		}
		st.Phase = phaseWhileRestartingAll(&p.pod.Spec, st.InitContainerStatuses, st.ContainerStatuses, mainStarted)
	}
	st.Conditions = []v1.PodCondition{
		condition(v1.PodReadyToStartContainers, p.netReady && !p.finished, "", prev.Conditions),
		condition(v1.PodInitialized, p.initialized || p.everInitialized, initReason, prev.Conditions),
		condition(v1.ContainersReady, allReady, notReadyReason, prev.Conditions),
		condition(v1.PodReady, allReady, notReadyReason, prev.Conditions),
		condition(v1.PodScheduled, true, "", prev.Conditions),
	}
	if p.agent.restartAll && allContainersCouldRestart(&p.pod.Spec) {
		st.Conditions = append(st.Conditions, restartingCondition(p.restartingAll, st.Phase, prev.Conditions))
	}
	// Conditions written by others stay, as a kubelet keeps them: DisruptionTarget (set by
	// the Eviction API, the scheduler's preemption, the taint manager), readiness gates.
	for _, c := range prev.Conditions {
		if !kubeletOwned(c.Type) {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}

// restartingCondition is AllContainersRestarting as a kubelet reports it on a pod with a
// RestartAllContainers rule (pkg/kubelet/status/generate.go GenerateAllContainersRestartingCondition):
// True from the exit that triggers it until every container has stopped, else False (reason
// PodCompleted or PodFailed once the pod has ended).
func restartingCondition(restarting bool, phase v1.PodPhase, prev []v1.PodCondition) v1.PodCondition {
	c := v1.PodCondition{Type: v1.AllContainersRestarting, Status: v1.ConditionFalse, LastTransitionTime: metav1.Now()}
	switch {
	case phase == v1.PodSucceeded:
		c.Reason = "PodCompleted"
	case phase == v1.PodFailed:
		c.Reason = "PodFailed"
	case restarting:
		c.Status, c.Reason, c.Message = v1.ConditionTrue, "RestartAllContainersStarted", "container exited with restart policy rule"
	}
	for _, p := range prev {
		if p.Type == c.Type && p.Status == c.Status {
			c.LastTransitionTime = p.LastTransitionTime
		}
	}
	return c
}

func kubeletOwned(t v1.PodConditionType) bool {
	switch t {
	case v1.PodReadyToStartContainers, v1.PodInitialized, v1.ContainersReady, v1.PodReady, v1.PodScheduled,
		v1.AllContainersRestarting:
		return true
	}
	return false
}
