package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
)

// Termination messages, as kubelet 1.37.2 handles them (k8s.io/kubernetes v1.37.2):
//
//   - Each start of a container gets a fresh empty file (mode 0666, a random name in the pod's
//     directory for that container), bind-mounted read-write at its terminationMessagePath
//     (kubelet_pods.go GenerateRunContainerOptions, kuberuntime/kuberuntime_container.go
//     makeMounts). No path, no file.
//   - Once the container has exited, its message is the last 4096 bytes of that file
//     (getTerminationMessage: tail.ReadAtMost with MaxContainerTerminationMessageLength).
//     Under terminationMessagePolicy FallbackToLogsOnError and a non-zero exit code, an empty
//     or missing file gives the tail of the container's log instead: its last 80 lines, of
//     which at most the last 2048 bytes (readLastStringFromContainerLogs,
//     MaxContainerTerminationMessageLogLines and ...LogLength in pkg/kubelet/container/runtime.go).
//   - Every status the kubelet writes cuts each terminated message (state and lastState) to its
//     first 12288 / (number of containers of the pod) bytes (status/status_manager.go
//     normalizeStatus, MaxPodTerminationMessageLogLength).
const (
	maxContainerTermMessage = 4 * 1024  // bytes of the file a container's message keeps (its end)
	maxPodTermMessages      = 12 * 1024 // bytes shared by the messages of one pod's containers
	termLogLines            = 80        // FallbackToLogsOnError: lines of the log tail
	termLogBytes            = 2 * 1024  // FallbackToLogsOnError: bytes of the log tail (its end)
)

// newTerminationFile creates the fresh file one start of a container writes its message to.
func newTerminationFile(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("termination-%08x", rand.Uint32()))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
	if err != nil {
		return "", err
	}
	f.Close()
	// The umask took bits off the mode; a container of any user may write it. A kubelet mounts
	// the file even where this fails, so does this node.
	_ = os.Chmod(path, 0o666)
	return path, nil
}

// terminationMessage is the message of a container that exited with code: what it wrote to
// hostPath (its file, "" when it had none), or under FallbackToLogsOnError the tail of its log
// at logPath when it failed and wrote nothing.
func terminationMessage(spec *v1.Container, code int32, hostPath, logPath string) string {
	fallback := spec.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError && code != 0
	msg, checkLogs := "", fallback
	if spec.TerminationMessagePath != "" && hostPath != "" {
		msg, checkLogs = readTerminationFile(hostPath, fallback)
	}
	if checkLogs {
		return logTail(logPath)
	}
	return msg
}

// readTerminationFile returns the last maxContainerTermMessage bytes of the file, and whether
// the log is to be read instead (fallback and the file is empty or missing).
func readTerminationFile(path string, fallback bool) (string, bool) {
	data, err := readLast(path, maxContainerTermMessage)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fallback
		}
		return fmt.Sprintf("Error on reading termination log %s: %v", path, err), false
	}
	return string(data), fallback && len(data) == 0
}

// logTail is what a kubelet takes from a failed container's log: the last termLogLines lines
// (a last line without its newline counts, as containerd writes it as a partial line), at most
// their last termLogBytes bytes.
func logTail(path string) string {
	// One byte more than the limit tells whether the lines start inside the last termLogBytes.
	data, err := readLast(path, termLogBytes+1)
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	return string(tailLines(data, termLogLines, termLogBytes))
}

// tailLines: the last n lines of data, of those at most the last max bytes.
func tailLines(data []byte, n, max int) []byte {
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end-- // the newline of the last line
	}
	start := 0
	for i := 0; i < n; i++ {
		j := bytes.LastIndexByte(data[:end], '\n')
		if j < 0 {
			start = 0
			break
		}
		start, end = j+1, j
	}
	if n == 0 {
		start = len(data)
	}
	if len(data)-start > max {
		start = len(data) - max
	}
	return data[start:]
}

// readLast reads the last max bytes of a file (tail.ReadAtMost in k8s.io/kubernetes).
func readLast(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if size := fi.Size(); size < max {
		max = size
	}
	if max == 0 {
		return nil, nil
	}
	if _, err := f.Seek(-max, io.SeekEnd); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// limitTerminationMessages cuts every terminated message of the status to its share of
// maxPodTermMessages, as the kubelet's status manager does before it writes a status.
func limitTerminationMessages(spec *v1.PodSpec, st *v1.PodStatus) {
	per := maxPodTermMessages
	if n := len(spec.InitContainers) + len(spec.Containers) + len(spec.EphemeralContainers); n > 0 {
		per /= n
	}
	// A copy is cut: a status may point at the container's own last state.
	cut := func(t **v1.ContainerStateTerminated) {
		if *t != nil && len((*t).Message) > per {
			short := **t
			short.Message = short.Message[:per]
			*t = &short
		}
	}
	for _, list := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			cut(&list[i].State.Terminated)
			cut(&list[i].LastTerminationState.Terminated)
		}
	}
}
