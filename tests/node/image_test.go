package main

import "testing"

func TestImageMap(t *testing.T) {
	m, err := parseImageMap("nccl-sidecar:*=/s, nccl-trainer=/t")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"nccl-sidecar:v1":               "/s",
		"registry.local/nccl-sidecar:1": "/s",
		"nccl-trainer:latest":           "/t",
		"nccl-trainer":                  "/t",
		"busybox:1":                     "",
	}
	for img, want := range cases {
		if got := m.dirFor(img); got != want {
			t.Errorf("dirFor(%q) = %q, want %q", img, got, want)
		}
	}
	if _, err := parseImageMap("nodir"); err == nil {
		t.Error("entry without = accepted")
	}
}
