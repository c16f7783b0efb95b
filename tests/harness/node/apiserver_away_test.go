package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Found by tests/chaos: kube-apiserver restarted while a job's pods were starting, testnode's
// TokenRequest for the pods' ServiceAccount volume got "connection refused", and the pods
// failed with SetupFailed (their jobs restarted an attempt). A kubelet retries a mount it
// cannot set up yet; so does testnode now, while the API server does not answer.
func TestTokenIsFetchedOnceTheApiServerAnswersAgain(t *testing.T) {
	client := fake.NewSimpleClientset()
	calls := 0
	client.PrependReactor("create", "serviceaccounts", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "token" {
			return false, nil, nil
		}
		calls++
		switch calls {
		case 1:
			return true, nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
		case 2:
			return true, nil, apierrors.NewServiceUnavailable("the server is shutting down")
		}
		return true, &authv1.TokenRequest{Status: authv1.TokenRequestStatus{Token: "t0ken",
			ExpirationTimestamp: metav1.NewTime(time.Now().Add(time.Hour))}}, nil
	})
	p := &podRunner{agent: &agent{client: client}, done: make(chan struct{}),
		pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-0", Namespace: "ns", UID: "u1"},
			Spec: v1.PodSpec{ServiceAccountName: "job-nccl"}}}
	defer close(p.done)
	dir := t.TempDir()
	if err := p.writeToken(context.Background(), dir, "token", "", nil); err != nil {
		t.Fatalf("the API server answered on the third try, want the token written: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "token")); string(got) != "t0ken" || calls != 3 {
		t.Fatalf("want the token after 3 requests, got %q after %d", got, calls)
	}
}

func TestTokenRequestTheApiServerRefusesFailsTheSetup(t *testing.T) {
	client := fake.NewSimpleClientset()
	client.PrependReactor("create", "serviceaccounts", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "job-nccl",
			errors.New("no"))
	})
	p := &podRunner{agent: &agent{client: client}, done: make(chan struct{}),
		pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-0", Namespace: "ns"}}}
	defer close(p.done)
	if err := p.writeToken(context.Background(), t.TempDir(), "token", "", nil); !apierrors.IsForbidden(err) {
		t.Fatalf("want the API server's Forbidden, got %v", err)
	}
}

// Found by tests/chaos: pods created just before kube-apiserver restarted got "connection
// refused" on their binding and stayed unbound (Pending) for good; the job never started.
func TestBindIsRetriedWhileTheApiServerIsAway(t *testing.T) {
	client := fake.NewSimpleClientset()
	calls := make(chan int, 10)
	n := 0
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		n++
		calls <- n
		if n == 1 {
			return true, nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
		}
		return true, nil, nil
	})
	a := &agent{client: client, nodeName: "local-node"}
	done := make(chan struct{})
	go func() {
		a.bind(context.Background(), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-0", Namespace: "ns", UID: "u1"}})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("bind did not finish within 10 s")
	}
	if len(calls) != 2 {
		t.Fatalf("want the refused bind tried again once (2 binds), got %d", len(calls))
	}
}

func TestBindTheApiServerRefusesIsNotRetried(t *testing.T) {
	client := fake.NewSimpleClientset()
	n := 0
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		n++
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "job-0", errors.New("no"))
	})
	a := &agent{client: client, nodeName: "local-node"}
	a.bind(context.Background(), &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-0", Namespace: "ns", UID: "u1"}})
	if n != 1 {
		t.Fatalf("a refused bind is final: want 1 bind, got %d", n)
	}
}
