package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type probeKind string

const (
	probeStartup   probeKind = "startup"
	probeReadiness probeKind = "readiness"
	probeLiveness  probeKind = "liveness"
)

// probeTarget is what a probe needs to reach the container: the pod IP on the bridge
// (reachable from the host) and the netns for exec probes.
type probeTarget struct {
	podIP   string
	netns   string
	ports   []v1.ContainerPort
	env     []string
	runProc func(ctx context.Context, argv []string, env []string) error
}

func resolvePort(p intstr.IntOrString, ports []v1.ContainerPort) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("named port %q not declared by the container", p.StrVal)
}

// probeOnce runs one probe attempt: nil means success.
func probeOnce(ctx context.Context, pr *v1.Probe, t probeTarget) error {
	timeout := time.Duration(pr.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case pr.HTTPGet != nil:
		port, err := resolvePort(pr.HTTPGet.Port, t.ports)
		if err != nil {
			return err
		}
		host := pr.HTTPGet.Host
		if host == "" {
			host = t.podIP
		}
		scheme := "http"
		if pr.HTTPGet.Scheme == v1.URISchemeHTTPS {
			scheme = "https"
		}
		url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), pr.HTTPGet.Path)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		for _, h := range pr.HTTPGet.HTTPHeaders {
			req.Header.Add(h.Name, h.Value)
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
		}
		return nil
	case pr.TCPSocket != nil:
		port, err := resolvePort(pr.TCPSocket.Port, t.ports)
		if err != nil {
			return err
		}
		host := pr.TCPSocket.Host
		if host == "" {
			host = t.podIP
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	case pr.Exec != nil:
		return t.runProc(ctx, pr.Exec.Command, t.env)
	}
	return fmt.Errorf("probe type not supported by this node (grpc)")
}

// runProbe reports every change of the probe's verdict, honouring the thresholds.
// A startup probe stops after its first success.
func runProbe(ctx context.Context, kind probeKind, pr *v1.Probe, t probeTarget, report func(probeKind, bool, string)) {
	period := time.Duration(pr.PeriodSeconds) * time.Second
	if period <= 0 {
		period = 10 * time.Second
	}
	success, failure := int(pr.SuccessThreshold), int(pr.FailureThreshold)
	if success <= 0 {
		success = 1
	}
	if failure <= 0 {
		failure = 3
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Duration(pr.InitialDelaySeconds) * time.Second):
	}
	okRun, failRun := 0, 0
	verdict := -1 // unknown
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		err := probeOnce(ctx, pr, t)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			okRun, failRun = okRun+1, 0
			if okRun >= success && verdict != 1 {
				verdict = 1
				report(kind, true, "")
				if kind == probeStartup {
					return
				}
			}
		} else {
			okRun, failRun = 0, failRun+1
			if failRun >= failure && verdict != 0 {
				verdict = 0
				report(kind, false, err.Error())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func execInNetns(netns string) func(ctx context.Context, argv []string, env []string) error {
	return func(ctx context.Context, argv []string, env []string) error {
		if len(argv) == 0 {
			return fmt.Errorf("exec probe without command")
		}
		args := argv
		if netns != "" {
			args = append([]string{"ip", "netns", "exec", netns}, argv...)
		}
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
}
