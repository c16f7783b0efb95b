package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

type containerKind int

const (
	kindInit containerKind = iota
	kindSidecar
	kindMain
)

// container is one container of a pod and its current process; guarded by podRunner.mu.
type container struct {
	spec         v1.Container
	kind         containerKind
	everStarted  bool
	running      bool
	pid          int
	startedAt    time.Time
	finishedAt   time.Time
	exitCode     int32
	termReason   string
	termMessage  string
	terminated   bool
	restartCount int32
	last         *v1.ContainerStateTerminated
	waitReason   string
	waitMessage  string
	ready        bool
	started      bool
	restartDue   bool // a restart timer is pending
	restartSeq   int  // a restart timer of an earlier sequence number is void
	stopProbes   context.CancelFunc
	logPath      string
	termPath     string // host file of this start's termination message (termination.go)

	resetSignalled bool // RestartAllContainers sent it SIGTERM
	bumpOnReset    bool // RestartAllContainers found it running or terminated: restartCount+1
}

type eventKind int

const (
	evExit eventKind = iota
	evProbe
	evRestart
	evKillTimeout
	evWake
	evStopTimeout // RestartAllContainers: SIGKILL the container if pid still runs
)

type event struct {
	kind     eventKind
	c        *container
	pid      int
	exitCode int32
	signaled bool
	probe    probeKind
	ok       bool
	message  string
	seq      int // evRestart: the container's restartSeq when it was scheduled
}

// podRunner plays the kubelet for one pod: network, containers in order, status.
type podRunner struct {
	agent *agent
	uid   types.UID

	mu          sync.Mutex
	pod         *v1.Pod
	dir         string
	netns       string
	ip          net.IP
	containers  []*container
	phase       v1.PodPhase
	reason      string
	message     string
	initialized bool
	netReady    bool
	stopping    bool        // sidecars are being stopped after the main containers ended
	endPhase    v1.PodPhase // the phase to report once stopping is over
	deleting    bool
	finished    bool
	startTime   time.Time

	everInitialized bool // the Initialized condition stays True through an in-place restart
	backoff         *crashLoopBackOff
	// RestartAllContainers (restart_all.go)
	resetting      bool         // stopping the containers for it
	restartingAll  bool         // the AllContainersRestarting condition is True
	resetPublished bool         // the status that started it is out; hold the rest until it ends
	resetQueue     []*container // still to stop, in the kubelet's order
	resetShown     bool         // the next advance turns RestartingAllContainers waits into first-start ones
	restartRound   bool         // from the reset until the main containers run again
	lastReset      time.Time
	resetWakeDue   bool // a trigger waits for restartAllMinInterval

	events   chan event
	deleteCh chan int64
	done     chan struct{}

	statusStale atomic.Bool // the last status update failed; resyncStatus resends it
}

func newPodRunner(a *agent, pod *v1.Pod) *podRunner {
	p := &podRunner{agent: a, uid: pod.UID, pod: pod.DeepCopy(), phase: v1.PodPending,
		dir:    filepath.Join(a.stateDir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID)),
		events: make(chan event, 64), deleteCh: make(chan int64, 1), done: make(chan struct{}), startTime: time.Now()}
	for _, c := range pod.Spec.InitContainers {
		k := kindInit
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			k = kindSidecar
		}
		p.containers = append(p.containers, &container{spec: c, kind: k, waitReason: "PodInitializing"})
	}
	for _, c := range pod.Spec.Containers {
		p.containers = append(p.containers, &container{spec: c, kind: kindMain, waitReason: "PodInitializing"})
	}
	return p
}

// send delivers an event unless the runner has already ended.
func (p *podRunner) send(ev event) {
	select {
	case p.events <- ev:
	case <-p.done:
	}
}

func (p *podRunner) key() string { return p.pod.Namespace + "/" + p.pod.Name }

func (p *podRunner) logf(format string, args ...any) {
	log.Printf("pod %s: %s", p.key(), fmt.Sprintf(format, args...))
}

// requestDelete is called when the pod has a deletionTimestamp.
func (p *podRunner) requestDelete(grace int64) {
	select {
	case p.deleteCh <- grace:
	default:
	}
}

func (p *podRunner) find(name string) *container {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.containers {
		if c.spec.Name == name {
			return c
		}
	}
	return nil
}

func (p *podRunner) run(ctx context.Context) {
	defer close(p.done)
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		p.logf("state dir: %v", err)
	}
	if err := p.setup(ctx); err != nil {
		p.logf("setup failed: %v", err)
		p.mu.Lock()
		p.phase, p.reason, p.message, p.finished = v1.PodFailed, "SetupFailed", err.Error(), true
		p.mu.Unlock()
		p.agent.pushStatus(ctx, p)
	} else {
		p.agent.pushStatus(ctx, p) // the pod IP, before any container starts
		p.advance(ctx)
		p.agent.pushStatus(ctx, p)
	}
	var killTimer *time.Timer
	for {
		select {
		case <-ctx.Done():
			// Node shutdown: stop quickly, leave the API objects alone.
			p.killAll(syscall.SIGTERM)
			p.waitGone(2 * time.Second)
			p.killAll(syscall.SIGKILL)
			p.waitGone(2 * time.Second)
			p.releaseNet()
			return
		case grace := <-p.deleteCh:
			p.mu.Lock()
			p.deleting = true
			p.mu.Unlock()
			p.logf("deletion requested, grace %ds", grace)
			p.killAll(syscall.SIGTERM)
			if killTimer == nil {
				killTimer = time.AfterFunc(time.Duration(grace)*time.Second, func() { p.send(event{kind: evKillTimeout}) })
			}
			if p.deleteIfGone(ctx) {
				return
			}
		case ev := <-p.events:
			p.handle(ctx, ev)
			p.mu.Lock()
			deleting := p.deleting
			p.mu.Unlock()
			if deleting {
				if ev.kind == evKillTimeout {
					p.killAll(syscall.SIGKILL)
				}
				if p.deleteIfGone(ctx) {
					return
				}
				continue
			}
			p.advance(ctx)
			p.agent.pushStatus(ctx, p)
		}
	}
}

// deleteIfGone finishes a deletion once no process is left: network down, API object removed.
func (p *podRunner) deleteIfGone(ctx context.Context) bool {
	if p.anyRunning() {
		return false
	}
	p.releaseNet()
	p.agent.deletePod(ctx, p)
	return true
}

func (p *podRunner) anyRunning() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.containers {
		if c.running {
			return true
		}
	}
	return false
}

func (p *podRunner) waitGone(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && p.anyRunning() {
		select {
		case ev := <-p.events:
			p.handle(context.Background(), ev)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (p *podRunner) killAll(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.containers {
		if c.running {
			p.logf("container %s: signal %v to pid %d", c.spec.Name, sig, c.pid)
			_ = syscall.Kill(-c.pid, sig)
		}
	}
}

// signal sends sig to one container's process group (the test helper's kill).
func (p *podRunner) signal(name string, sig syscall.Signal) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.containers {
		if c.spec.Name == name {
			if !c.running {
				return 0, fmt.Errorf("container %s is not running", name)
			}
			p.logf("container %s: debug signal %v to pid %d", name, sig, c.pid)
			return c.pid, syscall.Kill(-c.pid, sig)
		}
	}
	return 0, fmt.Errorf("no container %s", name)
}

func (p *podRunner) setup(ctx context.Context) error {
	if p.pod.Spec.HostNetwork {
		p.ip = net.ParseIP(p.agent.nodeIP)
	} else {
		ns, ip, err := p.agent.net.setupPod()
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.netns, p.ip = ns, ip
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.netReady = true
	p.mu.Unlock()
	return p.prepareVolumes(ctx)
}

func (p *podRunner) handle(ctx context.Context, ev event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := ev.c
	switch ev.kind {
	case evExit:
		if c == nil || !c.running || c.pid != ev.pid {
			return
		}
		c.running, c.ready, c.started, c.terminated = false, false, false, true
		c.exitCode, c.finishedAt = ev.exitCode, time.Now()
		c.termReason = "Completed"
		if ev.exitCode != 0 {
			c.termReason = "Error"
		}
		c.termMessage = terminationMessage(&c.spec, ev.exitCode, c.termPath, c.logPath)
		if c.stopProbes != nil {
			c.stopProbes()
		}
		_ = os.Remove(p.agent.pidFile(p.pod, c.spec.Name))
		p.logf("container %s: pid %d exited with code %d", c.spec.Name, ev.pid, ev.exitCode)
	case evProbe:
		if c == nil || !c.running {
			return
		}
		switch ev.probe {
		case probeStartup:
			c.started = ev.ok
			if ev.ok && c.spec.ReadinessProbe == nil {
				c.ready = true
			}
		case probeReadiness:
			c.ready = ev.ok
		case probeLiveness:
			if !ev.ok {
				p.logf("container %s: liveness probe failed (%s), killing", c.spec.Name, ev.message)
				_ = syscall.Kill(-c.pid, syscall.SIGKILL)
			}
		}
		p.logf("container %s: %s probe -> %v %s", c.spec.Name, ev.probe, ev.ok, ev.message)
	case evRestart:
		if ev.seq != c.restartSeq {
			return // scheduled before a RestartAllContainers
		}
		c.restartDue = false
		if !p.deleting && !p.finished && !p.stopping && !p.resetting {
			p.scheduleRestart(ctx, c) // the back-off has passed: starts it and records the restart
		}
	case evStopTimeout:
		if c != nil && c.running && c.pid == ev.pid {
			p.logf("container %s: SIGKILL (RestartAllContainers, still running after %v)", c.spec.Name, restartAllStopGrace)
			_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		}
	}
}

func (p *podRunner) restartPolicy() v1.RestartPolicy {
	if p.pod.Spec.RestartPolicy == "" {
		return v1.RestartPolicyAlways
	}
	return p.pod.Spec.RestartPolicy
}

// scheduleRestart restarts an exited container now or after its crash-loop back-off
// (restart_rules.go), waiting in CrashLoopBackOff meanwhile as a kubelet reports it.
func (p *podRunner) scheduleRestart(ctx context.Context, c *container) {
	if c.restartDue {
		return
	}
	if p.backoff == nil {
		p.backoff = newCrashLoopBackOff(p.agent.backoffInitial, p.agent.backoffMax)
	}
	wait, delay := p.backoff.next(c.spec.Name, c.finishedAt, time.Now())
	if wait <= 0 {
		p.startLocked(ctx, c)
		return
	}
	c.restartDue = true
	c.waitReason = "CrashLoopBackOff"
	c.waitMessage = fmt.Sprintf("back-off %v restarting failed container=%s pod=%s_%s(%s)", delay, c.spec.Name, p.pod.Name, p.pod.Namespace, p.uid)
	seq := c.restartSeq
	time.AfterFunc(wait, func() { p.send(event{kind: evRestart, c: c, seq: seq}) })
}

// restartAllOrWaitLocked starts a RestartAllContainers that a container's exit asks for, unless
// the last one ended less than restartAllMinInterval ago (then the next advance after that does).
func (p *podRunner) restartAllOrWaitLocked(trigger *container) {
	if wait := restartAllMinInterval - time.Since(p.lastReset); !p.lastReset.IsZero() && wait > 0 {
		if !p.resetWakeDue {
			p.resetWakeDue = true
			time.AfterFunc(wait, func() { p.send(event{kind: evWake}) })
		}
		return
	}
	p.resetWakeDue = false
	p.beginRestartAllLocked(trigger)
}

// advance starts whatever the pod's progress allows next; called after every event.
func (p *podRunner) advance(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished || p.deleting {
		return
	}
	if p.resetting {
		p.stepRestartAllLocked()
		return
	}
	if p.resetShown {
		p.afterResetShownLocked()
	}
	// Rules answer exits while the pod runs; not while it is ending (its sidecars' stops) or
	// being deleted (above).
	if !p.stopping {
		if trigger := p.restartAllTriggerLocked(); trigger != nil {
			p.restartAllOrWaitLocked(trigger)
			return
		}
	}
	policy := p.restartPolicy()
	restartAll := p.agent.restartAll
	if !p.initialized {
		for _, c := range p.containers {
			if c.kind == kindMain {
				continue
			}
			if c.kind == kindSidecar {
				if !c.running && !c.restartDue {
					if c.everStarted {
						p.scheduleRestart(ctx, c)
					} else {
						p.startLocked(ctx, c)
					}
				}
				if c.started {
					continue
				}
				return // the next container waits until this one has started
			}
			if c.terminated && c.exitCode == 0 && !c.running {
				continue
			}
			if c.running || c.restartDue {
				return
			}
			if c.terminated {
				if actionOnExit(&c.spec, c.kind, policy, c.exitCode, restartAll) == exitStays {
					p.reason, p.message = "InitContainerFailed", fmt.Sprintf("init container %s exited with code %d", c.spec.Name, c.exitCode)
					p.beginStopLocked(v1.PodFailed)
					return
				}
				p.scheduleRestart(ctx, c)
				return
			}
			p.startLocked(ctx, c)
			return
		}
		p.initialized, p.everInitialized, p.restartRound = true, true, false
		p.logf("initialized; starting main containers")
		for _, c := range p.containers {
			if c.kind == kindMain {
				p.startLocked(ctx, c)
			}
		}
	}
	if p.stopping {
		for _, c := range p.containers {
			if c.running {
				return
			}
		}
		p.finishLocked()
		return
	}
	allDone, allZero := true, true
	for _, c := range p.containers {
		switch c.kind {
		case kindSidecar:
			if !c.running && !c.restartDue {
				p.scheduleRestart(ctx, c)
			}
		case kindMain:
			if c.running || c.restartDue {
				allDone = false
				continue
			}
			if !c.terminated {
				allDone = false
				continue
			}
			if actionOnExit(&c.spec, c.kind, policy, c.exitCode, restartAll) == exitRestart {
				p.scheduleRestart(ctx, c)
				allDone = false
				continue
			}
			if c.exitCode != 0 {
				allZero = false
			}
		}
	}
	if allDone {
		phase := v1.PodSucceeded
		if !allZero {
			phase = v1.PodFailed
		}
		p.beginStopLocked(phase)
		if !p.anyRunningLocked() {
			p.finishLocked()
		}
	} else if p.phase == v1.PodPending {
		p.phase = v1.PodRunning
	}
}

// finishLocked: every container has stopped; the pod takes its end phase.
func (p *podRunner) finishLocked() {
	p.phase, p.finished = p.endPhase, true
	p.logf("finished: phase %s", p.phase)
	p.releaseNetLocked()
}

// releaseNetLocked gives the pod's namespace and IP back once; the name may be reused by
// the next pod at once, so it must never be deleted twice.
func (p *podRunner) releaseNetLocked() {
	if ns := p.netns; ns != "" {
		p.netns = ""
		go p.agent.net.teardownPod(ns)
	}
}

func (p *podRunner) releaseNet() {
	p.mu.Lock()
	ns := p.netns
	p.netns = ""
	p.mu.Unlock()
	p.agent.net.teardownPod(ns)
}

func (p *podRunner) anyRunningLocked() bool {
	for _, c := range p.containers {
		if c.running {
			return true
		}
	}
	return false
}

// beginStopLocked ends the pod in the given phase: SIGTERM to what still runs (the sidecars,
// once the main containers ended), SIGKILL after the termination grace period. As a kubelet does, the phase stays until every container
// has stopped (finishLocked): a Succeeded pod has no running sidecar, and its sidecars'
// terminated states arrive with the phase. (testnode reported the phase at once; the real
// kubelet of tests/harness/realnode does not.)
func (p *podRunner) beginStopLocked(phase v1.PodPhase) {
	p.endPhase, p.stopping, p.restartRound = phase, true, false
	grace := int64(30)
	if p.pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *p.pod.Spec.TerminationGracePeriodSeconds
	}
	var pids []int
	for _, c := range p.containers {
		if c.running {
			p.logf("container %s: SIGTERM (pod ending, grace %ds)", c.spec.Name, grace)
			_ = syscall.Kill(-c.pid, syscall.SIGTERM)
			pids = append(pids, c.pid)
		}
	}
	if len(pids) > 0 {
		time.AfterFunc(time.Duration(grace)*time.Second, func() {
			for _, pid := range pids {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		})
	}
}

// startLocked starts c's process; failures end in a terminated state so the pod progresses.
func (p *podRunner) startLocked(ctx context.Context, c *container) {
	if c.everStarted {
		if c.terminated {
			c.last = &v1.ContainerStateTerminated{ExitCode: c.exitCode, Reason: c.termReason, Message: c.termMessage,
				StartedAt: metaTime(c.startedAt), FinishedAt: metaTime(c.finishedAt), ContainerID: p.containerID(c)}
		}
		c.restartCount++
	}
	c.everStarted = true
	c.terminated, c.termMessage = false, ""
	fail := func(reason string, err error) {
		p.logf("container %s: %s: %v", c.spec.Name, reason, err)
		c.terminated, c.exitCode, c.termReason, c.termMessage = true, 128, reason, err.Error()
		c.startedAt, c.finishedAt = time.Now(), time.Now()
		go p.send(event{kind: evWake}) // let the loop advance past the failed container
	}
	logDir := filepath.Join(p.dir, c.spec.Name)
	_ = os.MkdirAll(logDir, 0o755)
	// A fresh file for this start's termination message; like a kubelet, a file that cannot be
	// made leaves the container without one rather than failing it.
	c.termPath = ""
	if c.spec.TerminationMessagePath != "" {
		if path, err := newTerminationFile(logDir); err != nil {
			p.logf("container %s: termination message file: %v", c.spec.Name, err)
		} else {
			c.termPath = path
		}
	}
	spec, err := p.agent.processSpec(ctx, p, c)
	if err != nil {
		fail("StartError", err)
		return
	}
	c.logPath = filepath.Join(logDir, strconv.Itoa(int(c.restartCount))+".log")
	logFile, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fail("StartError", err)
		return
	}
	cmd := exec.Command(spec.argv[0], spec.argv[1:]...)
	cmd.Env = spec.env
	cmd.Dir = spec.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		fail("StartError", err)
		return
	}
	logFile.Close()
	c.pid, c.running, c.startedAt = cmd.Process.Pid, true, time.Now()
	c.waitReason, c.waitMessage = "", ""
	c.started = c.spec.StartupProbe == nil
	c.ready = c.started && c.spec.ReadinessProbe == nil
	p.agent.writePidFile(p.pod, c.spec.Name, c.pid)
	p.logf("container %s: started pid %d: %v", c.spec.Name, c.pid, spec.userArgv)
	pid := c.pid
	go func() {
		err := cmd.Wait()
		code, signaled := int32(0), false
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code, signaled = 128+int32(ws.Signal()), true
			} else {
				code = int32(ee.ExitCode())
			}
		} else if err != nil {
			code = 128
		}
		p.send(event{kind: evExit, c: c, pid: pid, exitCode: code, signaled: signaled})
	}()
	probeCtx, cancel := context.WithCancel(ctx)
	c.stopProbes = cancel
	target := probeTarget{podIP: p.ip.String(), netns: p.netns, ports: c.spec.Ports, env: spec.env, runProc: execInNetns(p.netns)}
	report := func(k probeKind, ok bool, msg string) {
		p.send(event{kind: evProbe, c: c, probe: k, ok: ok, message: msg})
	}
	if c.spec.StartupProbe != nil {
		go runProbe(probeCtx, probeStartup, c.spec.StartupProbe, target, report)
	}
	if c.spec.ReadinessProbe != nil {
		go func() {
			// Readiness is probed only once the container has started, as in Kubernetes.
			for c.spec.StartupProbe != nil && !p.startedFlag(c) {
				select {
				case <-probeCtx.Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			runProbe(probeCtx, probeReadiness, c.spec.ReadinessProbe, target, report)
		}()
	}
	if c.spec.LivenessProbe != nil {
		go runProbe(probeCtx, probeLiveness, c.spec.LivenessProbe, target, report)
	}
}

func (p *podRunner) startedFlag(c *container) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return c.started
}

func (p *podRunner) containerID(c *container) string {
	return fmt.Sprintf("ncclnode://%s/%s/%d", p.uid, c.spec.Name, c.restartCount)
}
