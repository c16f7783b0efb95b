package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// imageMap maps image references (glob patterns such as "nccl-sidecar:*") to local
// directories that stand in for the image's filesystem: there is no container runtime.
type imageMap []struct{ pattern, dir string }

func parseImageMap(s string) (imageMap, error) {
	var m imageMap
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		eq := strings.LastIndex(item, "=")
		if eq <= 0 || eq == len(item)-1 {
			return nil, fmt.Errorf("--image-map entry %q: want PATTERN=DIR", item)
		}
		pat, dir := item[:eq], item[eq+1:]
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("--image-map pattern %q: %v", pat, err)
		}
		m = append(m, struct{ pattern, dir string }{pat, dir})
	}
	return m, nil
}

// dirFor returns the directory for an image; a pattern without a tag matches every tag and
// registry prefixes are tried both with and without.
func (m imageMap) dirFor(image string) string {
	candidates := []string{image}
	if i := strings.LastIndex(image, "/"); i >= 0 {
		candidates = append(candidates, image[i+1:])
	}
	for _, e := range m {
		for _, c := range candidates {
			name := c
			if j := strings.LastIndexAny(c, ":@"); j >= 0 && !strings.Contains(c[j:], "/") {
				name = c[:j]
			}
			if ok, _ := path.Match(e.pattern, c); ok {
				return e.dir
			}
			if ok, _ := path.Match(e.pattern, name); ok {
				return e.dir
			}
		}
	}
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// resolveCommand finds argv0: a bare name in the image directory, then the container PATH,
// then the host PATH; an absolute path as given, else its base name in the image directory.
func resolveCommand(argv0, imageDir, containerPath string) (string, error) {
	if strings.Contains(argv0, "/") {
		if isExecutable(argv0) {
			return argv0, nil
		}
		if imageDir != "" {
			for _, p := range []string{filepath.Join(imageDir, argv0), filepath.Join(imageDir, filepath.Base(argv0))} {
				if isExecutable(p) {
					return p, nil
				}
			}
		}
		return "", fmt.Errorf("executable %q not found (image dir %q)", argv0, imageDir)
	}
	var dirs []string
	if imageDir != "" {
		dirs = append(dirs, imageDir, filepath.Join(imageDir, "bin"))
	}
	dirs = append(dirs, filepath.SplitList(containerPath)...)
	dirs = append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if p := filepath.Join(d, argv0); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("executable %q not found in image dir %q or PATH", argv0, imageDir)
}

// withImageDirOnPath puts the image's directory first on the process's PATH, as an image has its
// programs on its PATH: `sh -c "nccl-allreduce ..."` then finds them too, not only command[0].
func withImageDirOnPath(env []string, imageDir string) []string {
	if imageDir == "" {
		return env
	}
	// The same places resolveCommand looks: the directory and its bin/.
	dirs := imageDir + string(os.PathListSeparator) + filepath.Join(imageDir, "bin")
	out := make([]string, 0, len(env)+1)
	found := false
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			found = true
			kv = "PATH=" + dirs + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
		out = append(out, kv)
	}
	if !found {
		out = append(out, "PATH="+dirs)
	}
	return out
}
