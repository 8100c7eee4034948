package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// widthProbe is appended to a copy of a report: after layout it writes the
// page's scroll width, the timeline container's width and the timeline's
// own drawn width into a pre#result that --dump-dom shows.
const widthProbe = `<script>window.addEventListener("load", function () {
  var box = document.querySelector(".scroll.timeline"), svg = document.querySelector("svg.timeline");
  var pre = document.createElement("pre"); pre.id = "result";
  pre.textContent = [document.documentElement.scrollWidth, window.innerWidth,
    box ? box.clientWidth : -1, svg ? svg.getBoundingClientRect().width : -1].join(" ");
  document.body.appendChild(pre);
});</script>`

// TestExplainTimelineInChromium renders plan explain's HTML step timeline
// (an interleaved Llama 3 70B and a ZB-H1 plan) in headless Chromium at
// 1280 px and at a phone's 390 px (a headless window is laid out at
// least 500 px wide, which the probe reports): the DOM must hold the timeline with a
// hover title on every drawn event, and the page must not be wider than
// the window, the timeline scrolling sideways inside its own box. Set
// MESHPLAN_SCREENSHOT=FILE.png to keep the screenshots (FILE-NAME-WIDTH.png).
// It is skipped where chromium is not installed.
func TestExplainTimelineInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	if testing.Short() {
		t.Skip("headless Chromium is slow: skipped under -short")
	}
	clearEnv(t)
	dir := t.TempDir()
	browse := func(page string, extra ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir()}, extra...)
		var out, errb bytes.Buffer
		c := exec.CommandContext(ctx, chromium, append(args, "file://"+page)...)
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Run(); err != nil {
			t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, errb.String())
		}
		return out.String()
	}
	result := regexp.MustCompile(`<pre id="result">([-0-9. ]+)</pre>`)
	for _, tc := range []struct{ name, strategy string }{
		{"interleaved", "dp=16,tp=8,pp=8,schedule=interleaved,v=5"},
		{"zb-h1", "dp=16,tp=8,pp=8,schedule=zb-h1"},
	} {
		report := filepath.Join(dir, tc.name+".html")
		args := []string{"explain", "--model", "llama3-70b", "--cluster", "h100-1024", "--batch", "1024", "--seq", "8192",
			"--strategy", tc.strategy, "--format", "html", "--out", report}
		if _, stderr, code := run(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		dom := browse(report, "--dump-dom")
		i := strings.Index(dom, `<svg class="timeline"`)
		if i < 0 {
			t.Fatalf("%s: Chromium's DOM has no timeline", tc.name)
		}
		svg := dom[i : i+strings.Index(dom[i:], "</svg>")]
		rects := strings.Count(svg, `<rect class="ev`)
		titled := len(regexp.MustCompile(`<rect class="ev[^>]*>\s*<title>[^<]+</title>`).FindAllString(svg, -1))
		if rects == 0 || titled != rects {
			t.Errorf("%s: %d timeline events, %d with a hover title; want every one titled", tc.name, rects, titled)
		}
		data, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		probe := filepath.Join(dir, tc.name+"-probe.html")
		if err := os.WriteFile(probe, bytes.Replace(data, []byte("</body>"), []byte(widthProbe+"</body>"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, width := range []int{1280, 390} {
			size := "--window-size=" + strconv.Itoa(width) + ",900"
			m := result.FindStringSubmatch(browse(probe, "--dump-dom", size, "--virtual-time-budget=5000"))
			if m == nil {
				t.Fatalf("%s at %d px: the width probe printed nothing", tc.name, width)
			}
			f := strings.Fields(m[1])
			page, window, box, drawn := atof(f[0]), atof(f[1]), atof(f[2]), atof(f[3])
			t.Logf("%s at %d px: page %.0f px wide in a %.0f px window, timeline box %.0f px, timeline drawn %.0f px", tc.name, width, page, window, box, drawn)
			if page > window+1 {
				t.Errorf("%s at %d px: the page is %.0f px wide, wider than the %.0f px window", tc.name, width, page, window)
			}
			if box <= 0 || box > window {
				t.Errorf("%s at %d px: the timeline's box is %.0f px wide in a %.0f px window", tc.name, width, box, window)
			}
			png := filepath.Join(dir, tc.name+"-"+strconv.Itoa(width)+".png")
			browse(report, "--screenshot="+png, size, "--hide-scrollbars")
			shot, err := os.ReadFile(png)
			if err != nil || !bytes.HasPrefix(shot, []byte("\x89PNG")) {
				t.Fatalf("%s at %d px: no screenshot: %v", tc.name, width, err)
			}
			if keep := os.Getenv("MESHPLAN_SCREENSHOT"); keep != "" {
				if err := os.WriteFile(strings.TrimSuffix(keep, ".png")+"-"+tc.name+"-"+strconv.Itoa(width)+".png", shot, 0o644); err != nil {
					t.Error(err)
				}
			}
		}
	}
}

// atof reads a number the width probe printed (0 for none).
func atof(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
