package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func numberedLines(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// The file's message is its last 4096 bytes (the kubelet's tail.ReadAtMost), whatever the policy.
func TestTerminationMessageKeepsTheLast4096Bytes(t *testing.T) {
	head, tail := strings.Repeat("a", 904), strings.Repeat("b", maxContainerTermMessage)
	file := writeTemp(t, "termination", []byte(head+tail))
	for _, policy := range []v1.TerminationMessagePolicy{v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError} {
		spec := &v1.Container{TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: policy}
		if got := terminationMessage(spec, 86, file, ""); got != tail {
			t.Errorf("%s: a 5000-byte message: got %d bytes starting %q, want the last 4096 (all b)", policy, len(got), got[:8])
		}
	}
	short := writeTemp(t, "termination", []byte("rank 3 stalled at step 120\n"))
	spec := &v1.Container{TerminationMessagePath: "/dev/termination-log"}
	if got := terminationMessage(spec, 0, short, ""); got != "rank 3 stalled at step 120\n" {
		t.Errorf("a short message is kept whole, newline included: got %q", got)
	}
}

// FallbackToLogsOnError reads the log only when the container failed and its file is empty or
// missing; File never reads it.
func TestTerminationMessageFallbackToLogs(t *testing.T) {
	log := writeTemp(t, "0.log", []byte(numberedLines(0, 100)))
	empty := writeTemp(t, "termination", nil)
	written := writeTemp(t, "termination", []byte("why"))
	missing := filepath.Join(t.TempDir(), "gone")
	last80 := numberedLines(20, 100)
	for _, tt := range []struct {
		name   string
		policy v1.TerminationMessagePolicy
		path   string // terminationMessagePath
		file   string
		code   int32
		want   string
	}{
		{"fallback, failed, empty file", v1.TerminationMessageFallbackToLogsOnError, "/dev/termination-log", empty, 2, last80},
		{"fallback, killed, empty file", v1.TerminationMessageFallbackToLogsOnError, "/dev/termination-log", empty, 137, last80},
		{"fallback, succeeded, empty file", v1.TerminationMessageFallbackToLogsOnError, "/dev/termination-log", empty, 0, ""},
		{"fallback, failed, file written", v1.TerminationMessageFallbackToLogsOnError, "/dev/termination-log", written, 2, "why"},
		{"fallback, failed, file missing", v1.TerminationMessageFallbackToLogsOnError, "/dev/termination-log", missing, 2, last80},
		{"fallback, failed, no path", v1.TerminationMessageFallbackToLogsOnError, "", "", 2, last80},
		{"File, failed, empty file", v1.TerminationMessageReadFile, "/dev/termination-log", empty, 2, ""},
		{"File, failed, file written", v1.TerminationMessageReadFile, "/dev/termination-log", written, 2, "why"},
		{"no policy (File), failed, file missing", "", "/dev/termination-log", missing, 2, ""},
	} {
		spec := &v1.Container{TerminationMessagePath: tt.path, TerminationMessagePolicy: tt.policy}
		if got := terminationMessage(spec, tt.code, tt.file, log); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The log tail is the last 80 lines, of those the last 2048 bytes; a last line without its
// newline counts as a line and stays as written.
func TestLogTailLimits(t *testing.T) {
	long := strings.Repeat("x", 99) + "\n" // 100 bytes a line
	for _, tt := range []struct {
		name, log, want string
	}{
		{"fewer lines than 80", "one\ntwo\n", "one\ntwo\n"},
		{"no newline at the end", numberedLines(0, 85) + "last", numberedLines(6, 85) + "last"},
		{"lines over 2048 bytes", strings.Repeat(long, 30), strings.Repeat(long, 30)[3000-termLogBytes:]},
		{"exactly 80 lines", numberedLines(0, 80), numberedLines(0, 80)},
		{"empty", "", ""},
		{"blank lines count", strings.Repeat("\n", 100), strings.Repeat("\n", 80)},
	} {
		if got := logTail(writeTemp(t, "0.log", []byte(tt.log))); got != tt.want {
			t.Errorf("%s: got %d bytes %q, want %d bytes %q", tt.name, len(got), got, len(tt.want), tt.want)
		}
	}
	if got := logTail(filepath.Join(t.TempDir(), "none.log")); !strings.HasPrefix(got, "Error on reading termination message from logs: ") {
		t.Errorf("a missing log: got %q", got)
	}
}

// logTail reads only the end of the log; what it returns is the tail of the whole log.
func TestLogTailOfTheFileEndMatchesTheWholeLog(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		var b bytes.Buffer
		for n := r.IntN(200); n > 0; n-- {
			b.WriteString(strings.Repeat("y", r.IntN(60)))
			if r.IntN(10) > 0 {
				b.WriteByte('\n')
			}
		}
		data := b.Bytes()
		want := string(tailLines(data, termLogLines, termLogBytes))
		if got := logTail(writeTemp(t, "0.log", data)); got != want {
			t.Fatalf("log of %d bytes: read from its end %q, from the whole log %q", len(data), got, want)
		}
	}
}

// Every status cuts each terminated message, state and lastState, to the first
// 12288/(number of containers) bytes, as the kubelet's status manager does.
func TestPodTerminationMessagesShareTwelveKiB(t *testing.T) {
	msg := strings.Repeat("m", maxContainerTermMessage-1) + "!"
	mk := func(name string, kind containerKind) *container {
		return &container{spec: v1.Container{Name: name}, kind: kind, everStarted: true, terminated: true, exitCode: 86,
			termReason: "Error", termMessage: msg, restartCount: 1,
			last: &v1.ContainerStateTerminated{ExitCode: 86, Reason: "Error", Message: msg}}
	}
	for _, tt := range []struct {
		init, main int
		want       int
	}{
		{0, 1, maxContainerTermMessage}, // 12288 for one: the file's 4096 are kept
		{1, 2, maxContainerTermMessage}, // 4096 each
		{1, 3, 3072},
		{2, 4, 2048},
	} {
		p := &podRunner{agent: &agent{}, phase: v1.PodFailed, finished: true, pod: &v1.Pod{}}
		for i := 0; i < tt.init; i++ {
			c := mk(fmt.Sprintf("init%d", i), kindInit)
			p.containers = append(p.containers, c)
			p.pod.Spec.InitContainers = append(p.pod.Spec.InitContainers, c.spec)
		}
		for i := 0; i < tt.main; i++ {
			c := mk(fmt.Sprintf("main%d", i), kindMain)
			p.containers = append(p.containers, c)
			p.pod.Spec.Containers = append(p.pod.Spec.Containers, c.spec)
		}
		st := p.status(v1.PodStatus{}, "10.0.0.1")
		for _, s := range append(st.InitContainerStatuses, st.ContainerStatuses...) {
			for what, term := range map[string]*v1.ContainerStateTerminated{"state": s.State.Terminated, "lastState": s.LastTerminationState.Terminated} {
				if term == nil || term.Message != msg[:tt.want] {
					t.Errorf("%d containers, %s %s: want the first %d bytes of the message, got %+v", tt.init+tt.main, s.Name, what, tt.want, term)
				}
			}
		}
		if c := p.containers[0]; c.termMessage != msg || c.last.Message != msg {
			t.Error("the cut is the status's; the container keeps its message")
		}
	}
}

// Each start gets a fresh empty file, mounted last at terminationMessagePath; the message of the
// start before stays in lastState.
func TestTerminationFilePerStartAndLastState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := &container{spec: v1.Container{Name: "sidecar", TerminationMessagePath: "/dev/termination-log",
		RestartPolicy: policy(v1.ContainerRestartPolicyAlways)}, kind: kindSidecar}
	p := &podRunner{agent: &agent{stateDir: dir}, dir: filepath.Join(dir, "pod"), phase: v1.PodRunning,
		pod: &v1.Pod{Spec: v1.PodSpec{InitContainers: []v1.Container{c.spec}}}, containers: []*container{c},
		events: make(chan event, 16), done: make(chan struct{})}
	defer close(p.done)

	// A start that cannot run (no command here) still gets its file first, as a kubelet makes
	// it before it creates the container.
	p.mu.Lock()
	p.startLocked(ctx, c)
	p.mu.Unlock()
	first := c.termPath
	if fi, err := os.Stat(first); err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o666 {
		t.Fatalf("the termination file of the first start: %v %v", fi, err)
	}
	mounts, err := p.mountsFor(c)
	if err != nil {
		t.Fatal(err)
	}
	if last := mounts[len(mounts)-1]; last.src != first || last.dst != "/dev/termination-log" || last.readOnly {
		t.Errorf("want the file mounted read-write at /dev/termination-log, last of the mounts; got %+v", mounts)
	}

	// That start ran and exited 86 after writing why.
	if err := os.WriteFile(first, []byte("rank 1 stalled"), 0o666); err != nil {
		t.Fatal(err)
	}
	c.running, c.pid, c.terminated = true, 4242, false
	p.handle(ctx, event{kind: evExit, c: c, pid: 4242, exitCode: 86})
	if term := p.status(v1.PodStatus{}, "").InitContainerStatuses[0].State.Terminated; term == nil || term.Message != "rank 1 stalled" {
		t.Fatalf("state.terminated.message: got %+v", term)
	}
	p.mu.Lock()
	p.startLocked(ctx, c) // the restart
	p.mu.Unlock()
	if c.termPath == first || c.termPath == "" {
		t.Fatalf("the restart needs a file of its own, got %q (first %q)", c.termPath, first)
	}
	s := p.status(v1.PodStatus{}, "").InitContainerStatuses[0]
	if last := s.LastTerminationState.Terminated; last == nil || last.ExitCode != 86 || last.Message != "rank 1 stalled" || s.RestartCount != 1 {
		t.Errorf("after the restart: want restartCount 1 and lastState 86 'rank 1 stalled', got %+v", s)
	}
}

// A container without terminationMessagePath (the API server always sets one) gets no file.
func TestNoTerminationFileWithoutPath(t *testing.T) {
	dir := t.TempDir()
	c := &container{spec: v1.Container{Name: "main"}, kind: kindMain}
	p := &podRunner{agent: &agent{stateDir: dir}, dir: dir, pod: &v1.Pod{}, containers: []*container{c},
		events: make(chan event, 4), done: make(chan struct{})}
	defer close(p.done)
	p.mu.Lock()
	p.startLocked(context.Background(), c)
	p.mu.Unlock()
	if c.termPath != "" {
		t.Errorf("no path, yet a file %s", c.termPath)
	}
	if mounts, _ := p.mountsFor(c); len(mounts) != 1 || mounts[0].dst != saMountPath {
		t.Errorf("want only the ServiceAccount mount, got %+v", mounts)
	}
}
