package main

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
)

// What a container's exit asks of the node, as kubelet 1.37.2 decides it (pure: no processes,
// no API). pod.go and restart_all.go act on the answers. Sources, all in k8s.io/kubernetes
// v1.37.2: pkg/api/v1/pod/util.go (ContainerShouldRestart, FindMatchingContainerRestartRule,
// AllContainersCouldRestart), pkg/kubelet/container/helpers.go (ShouldContainerBeRestarted,
// ShouldAllContainersRestart), pkg/kubelet/kuberuntime/kuberuntime_container.go
// (computeInitContainerActions: a sidecar always restarts).

// featureRestartAll is the kubelet feature gate (and Node status.declaredFeatures entry) of the
// RestartAllContainers action.
const featureRestartAll = "RestartAllContainersOnContainerExits"

type exitAction int

const (
	exitStays      exitAction = iota // the container stays terminated
	exitRestart                      // restart this container (after its crash-loop back-off)
	exitRestartAll                   // restart every container of the pod in place
)

func (a exitAction) String() string {
	return [...]string{"stays terminated", "restart", "restart all containers"}[a]
}

// matchingRule is the first of the container's restartPolicyRules whose exitCodes match code.
// A rule without exitCodes or with an unknown operator never matches.
func matchingRule(c *v1.Container, code int32) (v1.ContainerRestartRule, bool) {
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			continue
		}
		listed := slices.Contains(r.ExitCodes.Values, code)
		switch r.ExitCodes.Operator {
		case v1.ContainerRestartRuleOnExitCodesOpIn:
			if listed {
				return r, true
			}
		case v1.ContainerRestartRuleOnExitCodesOpNotIn:
			if !listed {
				return r, true
			}
		}
	}
	return v1.ContainerRestartRule{}, false
}

// triggersRestartAll: the exit matches a rule whose action is RestartAllContainers. The kubelet
// checks every container's latest exit this way, init containers and sidecars included, and only
// with the feature on (restartAll).
func triggersRestartAll(c *v1.Container, code int32, restartAll bool) bool {
	r, ok := matchingRule(c, code)
	return restartAll && ok && r.Action == v1.ContainerRestartRuleActionRestartAllContainers
}

// shouldRestart: the container's rules (only when it has a restartPolicy of its own; the first
// match decides), else its restartPolicy, else the pod's restartPolicy (empty means Always).
// A matched RestartAllContainers rule counts as a restart; with the feature off it is skipped and
// the container's restartPolicy decides.
func shouldRestart(c *v1.Container, podPolicy v1.RestartPolicy, code int32, restartAll bool) bool {
	if c.RestartPolicy != nil {
		if r, ok := matchingRule(c, code); ok {
			switch r.Action {
			case v1.ContainerRestartRuleActionRestart:
				return true
			case v1.ContainerRestartRuleActionRestartAllContainers:
				if restartAll {
					return true
				}
			}
		}
		switch *c.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return true
		case v1.ContainerRestartPolicyOnFailure:
			return code != 0
		case v1.ContainerRestartPolicyNever:
			return false
		}
	}
	switch podPolicy {
	case v1.RestartPolicyOnFailure:
		return code != 0
	case v1.RestartPolicyNever:
		return false
	}
	return true
}

// actionOnExit is what the node does when a container of the given kind exits with code.
// A regular init container that exited 0 has done its job; one that failed restarts by
// shouldRestart (else the pod fails). A sidecar always restarts. A main container restarts by
// shouldRestart.
func actionOnExit(c *v1.Container, kind containerKind, podPolicy v1.RestartPolicy, code int32, restartAll bool) exitAction {
	switch {
	case triggersRestartAll(c, code, restartAll):
		return exitRestartAll
	case kind == kindSidecar:
		return exitRestart
	case kind == kindInit && code == 0:
		return exitStays
	case shouldRestart(c, podPolicy, code, restartAll):
		return exitRestart
	}
	return exitStays
}

// allContainersCouldRestart: some container of the pod has a RestartAllContainers rule; only such
// pods carry the AllContainersRestarting condition.
func allContainersCouldRestart(spec *v1.PodSpec) bool {
	for _, list := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range list {
			for _, r := range c.RestartPolicyRules {
				if r.Action == v1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}

// The kubelet's crash-loop back-off (pkg/kubelet/kubelet.go newCrashLoopBackOff and its
// flowcontrol.Backoff, used by kuberuntime_manager.go doBackOff). Per container:
//   - a restart whose container finished more than backoffReset after the previous restart (it ran
//     that long) starts at once and sets the delay to initial;
//   - otherwise it waits until finished+delay, then starts and doubles the delay, up to max.
//
// So the first restart is immediate, the second waits initial, then 2x, 4x ... max.
// A RestartAllContainers restart never consults or advances it: the kubelet removes the exited
// containers first, and doBackOff finds no exited container to back off from.
const backoffReset = 600 * time.Second

type backoffEntry struct {
	delay      time.Duration
	lastUpdate time.Time
}

type crashLoopBackOff struct {
	initial, max time.Duration
	entries      map[string]backoffEntry
}

func newCrashLoopBackOff(initial, max time.Duration) *crashLoopBackOff {
	if max < initial { // as the kubelet: a configured maximum below the initial delay caps both
		initial = max
	}
	return &crashLoopBackOff{initial: initial, max: max, entries: map[string]backoffEntry{}}
}

// next answers a restart of the container that finished at finished, asked at now: how long to
// wait still (0: start now, which records the restart) and the delay in force (for the message).
func (b *crashLoopBackOff) next(name string, finished, now time.Time) (wait, delay time.Duration) {
	e, ok := b.entries[name]
	fresh := !ok || finished.Sub(e.lastUpdate) > backoffReset
	if !fresh && now.Sub(finished) < e.delay {
		return finished.Add(e.delay).Sub(now), e.delay
	}
	if fresh {
		e.delay = b.initial
	} else {
		e.delay = min(2*e.delay, b.max)
	}
	e.lastUpdate = now
	b.entries[name] = e
	return 0, e.delay
}
