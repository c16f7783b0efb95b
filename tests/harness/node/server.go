package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// logHandler serves GET /containerLogs/{namespace}/{pod}/{container}, the path the API
// server uses for `kubectl logs`, with follow, tailLines, previous and limitBytes.
func (a *agent) logHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", a.serveLogs)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	return logRequests(mux)
}

func logRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("http: %s %s", r.Method, r.URL.RequestURI())
		h.ServeHTTP(w, r)
	})
}

func (a *agent) serveLogs(w http.ResponseWriter, r *http.Request) {
	ns, name, cname := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	q := r.URL.Query()
	pr := a.runner(ns, name)
	if pr == nil {
		http.Error(w, fmt.Sprintf("pod %s/%s is not running on this node", ns, name), http.StatusNotFound)
		return
	}
	c := pr.find(cname)
	if c == nil {
		http.Error(w, fmt.Sprintf("container %s is not in pod %s/%s", cname, ns, name), http.StatusNotFound)
		return
	}
	pr.mu.Lock()
	restarts, logPath := c.restartCount, c.logPath
	pr.mu.Unlock()
	if q.Get("previous") == "true" {
		if restarts == 0 {
			http.Error(w, fmt.Sprintf("previous terminated container %s in pod %s/%s not found", cname, ns, name), http.StatusBadRequest)
			return
		}
		logPath = filepath.Join(filepath.Dir(logPath), strconv.Itoa(int(restarts-1))+".log")
	}
	if logPath == "" {
		http.Error(w, fmt.Sprintf("container %s in pod %s/%s is waiting to start", cname, ns, name), http.StatusBadRequest)
		return
	}
	f, err := os.Open(logPath)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain")
	var out io.Writer = w
	if lb, err := strconv.ParseInt(q.Get("limitBytes"), 10, 64); err == nil && lb > 0 {
		out = &limitWriter{w: w, left: lb}
	}
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 {
		if err := seekTail(f, n); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if _, err := io.Copy(out, f); err != nil {
		return
	}
	if q.Get("follow") != "true" || q.Get("previous") == "true" {
		return
	}
	flusher, _ := w.(http.Flusher)
	for {
		if flusher != nil {
			flusher.Flush()
		}
		pr.mu.Lock()
		still := c.running && c.logPath == logPath
		pr.mu.Unlock()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		if _, err := io.Copy(out, f); err != nil {
			return
		}
		if !still {
			return
		}
	}
}

// seekTail positions f at the start of its last n lines.
func seekTail(f *os.File, n int) error {
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	pos := end
	for i := 0; i < n; i++ {
		j := bytes.LastIndexByte(data[:pos], '\n')
		if j < 0 {
			pos = -1
			break
		}
		pos = j
		if i == n-1 {
			break
		}
	}
	start := pos + 1
	if n == 0 {
		start = len(data)
	}
	_, err = f.Seek(int64(start), io.SeekStart)
	return err
}

type limitWriter struct {
	w    io.Writer
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.w.Write(p)
	l.left -= int64(n)
	return n, err
}

// debugHandler is the test helper API on localhost:
//
//	POST /debug/kill?namespace=N&pod=P&container=C&signal=KILL   signal a container's process group
//	GET  /debug/pods                                              pods, containers and pids as JSON
func (a *agent) debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /debug/kill", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		pr := a.runner(q.Get("namespace"), q.Get("pod"))
		if pr == nil {
			http.Error(w, "no such pod on this node", http.StatusNotFound)
			return
		}
		sig, err := parseSignal(q.Get("signal"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		pid, err := pr.signal(q.Get("container"), sig)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		fmt.Fprintf(w, "sent %v to pid %d\n", sig, pid)
	})
	mux.HandleFunc("GET /debug/pods", func(w http.ResponseWriter, _ *http.Request) {
		type ctr struct {
			Name     string `json:"name"`
			Pid      int    `json:"pid,omitempty"`
			Running  bool   `json:"running"`
			Restarts int32  `json:"restarts"`
			Log      string `json:"log,omitempty"`
			TermFile string `json:"terminationFile,omitempty"`
		}
		type pod struct {
			Namespace  string `json:"namespace"`
			Name       string `json:"name"`
			IP         string `json:"ip"`
			Netns      string `json:"netns,omitempty"`
			Phase      string `json:"phase"`
			Containers []ctr  `json:"containers"`
		}
		var out []pod
		for _, r := range a.allRunners() {
			r.mu.Lock()
			p := pod{Namespace: r.pod.Namespace, Name: r.pod.Name, Netns: r.netns, Phase: string(r.phase)}
			if r.ip != nil {
				p.IP = r.ip.String()
			}
			for _, c := range r.containers {
				p.Containers = append(p.Containers, ctr{Name: c.spec.Name, Pid: c.pid, Running: c.running, Restarts: c.restartCount, Log: c.logPath, TermFile: c.termPath})
			}
			r.mu.Unlock()
			out = append(out, p)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	return logRequests(mux)
}

func parseSignal(s string) (syscall.Signal, error) {
	if s == "" {
		return syscall.SIGKILL, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return syscall.Signal(n), nil
	}
	switch strings.TrimPrefix(strings.ToUpper(s), "SIG") {
	case "KILL":
		return syscall.SIGKILL, nil
	case "TERM":
		return syscall.SIGTERM, nil
	case "INT":
		return syscall.SIGINT, nil
	case "HUP":
		return syscall.SIGHUP, nil
	case "USR1":
		return syscall.SIGUSR1, nil
	case "USR2":
		return syscall.SIGUSR2, nil
	case "STOP":
		return syscall.SIGSTOP, nil
	case "CONT":
		return syscall.SIGCONT, nil
	}
	return 0, fmt.Errorf("unknown signal %q", s)
}

var _ = bufio.NewReader
