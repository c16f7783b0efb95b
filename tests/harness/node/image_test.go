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

func TestWithImageDirOnPath(t *testing.T) {
	got := withImageDirOnPath([]string{"A=1", "PATH=/usr/bin:/bin"}, "/img")
	if got[1] != "PATH=/img:/img/bin:/usr/bin:/bin" || got[0] != "A=1" || len(got) != 2 {
		t.Errorf("got %v", got)
	}
	if got := withImageDirOnPath([]string{"A=1"}, "/img"); len(got) != 2 || got[1] != "PATH=/img:/img/bin" {
		t.Errorf("no PATH: got %v", got)
	}
	if got := withImageDirOnPath([]string{"PATH=/bin"}, ""); got[0] != "PATH=/bin" {
		t.Errorf("no image dir: got %v", got)
	}
}
