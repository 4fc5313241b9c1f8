package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// The first screen of a report, measured in a real browser: Chromium lays
// the page out at 1400×900 and a script at the end of the page writes where
// the verdict and the latency table are into the DOM, which --dump-dom
// prints. Measuring positions in the DOM (rather than reading them off a
// screenshot) needs no image code and no DevTools client, and what is
// measured is the browser's own layout.
const (
	screenW, screenH = 1400, 900
	offsetsScript    = `<script>(function () {
  var out = [];
  function put(name, el) {
    if (!el) { out.push(name + " missing"); return; }
    var r = el.getBoundingClientRect();
    out.push(name + " " + Math.round(r.top + window.scrollY) + " " + Math.round(r.bottom + window.scrollY));
  }
  put("verdict", document.getElementById("verdict"));
  put("latency", document.getElementById("latency"));
  out.push("width " + window.innerWidth);
  var pre = document.createElement("pre");
  pre.id = "tokex-offsets";
  pre.textContent = out.join("\n");
  document.body.appendChild(pre);
})();</script>`
)

// chromium is the browser on PATH, "" when there is none.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// ChromiumFlags keep a headless Chromium off the network and out of the
// user's profile (scripts/screenshots.sh uses the same).
func chromiumFlags(profile string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + profile, fmt.Sprintf("--window-size=%d,%d", screenW, screenH)}
}

var offsetLine = regexp.MustCompile(`(?m)^(verdict|latency) (-?\d+) (-?\d+)$`)

// TestReportFirstScreen: in the report of a busy-machine campaign (every
// run failed by host_saturated and generator_late) and of a passing one,
// the verdict and the whole latency table are inside the first 900 pixels
// at 1400 wide. On main the warnings, one per run and code, pushed the
// table below the first screen.
func TestReportFirstScreen(t *testing.T) {
	t.Parallel()
	browser := chromium()
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install chromium): the report's first screen is not measured")
	}
	for _, name := range []string{"run-busy", "passed"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			top := measure(t, browser, filepath.Join("../../testdata/campaigns", name))
			for _, el := range []string{"verdict", "latency"} {
				ys, ok := top[el]
				if !ok {
					t.Errorf("%s: no %s in the page", name, el)
					continue
				}
				t.Logf("%s: %s from y=%d to y=%d (of %d)", name, el, ys[0], ys[1], screenH)
				if ys[1] > screenH {
					t.Errorf("%s: the %s ends at y=%d, below the first %d pixels", name, el, ys[1], screenH)
				}
			}
		})
	}
}

// measure renders the campaign's report with the offsets script and
// returns each element's top and bottom in page pixels.
func measure(t *testing.T, browser, dir string) map[string][2]int {
	t.Helper()
	page, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(page, []byte("</body>"))
	if i < 0 {
		t.Fatal("the report has no </body>")
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "report.html")
	withScript := append(append(append([]byte{}, page[:i]...), offsetsScript...), page[i:]...)
	if err := os.WriteFile(file, withScript, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, append(chromiumFlags(filepath.Join(tmp, "profile")), "--dump-dom", "file://"+file)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Skip("chromium did not lay the page out within 8 s (a busy machine): not measured")
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
	}
	_, pre, ok := bytes.Cut(out, []byte(`<pre id="tokex-offsets">`))
	pre, _, _ = bytes.Cut(pre, []byte("</pre>"))
	if !ok || !bytes.Contains(pre, []byte(fmt.Sprintf("width %d", screenW))) {
		t.Fatalf("no offsets of a page laid out %d wide:\n%s", screenW, tail(out))
	}
	got := map[string][2]int{}
	for _, m := range offsetLine.FindAllSubmatch(pre, -1) {
		a, _ := strconv.Atoi(string(m[2]))
		b, _ := strconv.Atoi(string(m[3]))
		got[string(m[1])] = [2]int{a, b}
	}
	return got
}

func tail(b []byte) []byte { return b[max(0, len(b)-2000):] }
