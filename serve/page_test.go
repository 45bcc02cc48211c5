package serve_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/onnxconv/onnxconv/exporters/profiles"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/serve"
)

// TestPageInChromium drives the page at / in headless Chromium as a person
// would: chooses a fixture model, converts it, waits for the verdict,
// sees the report inline and downloads the model, which must be the file
// `onnxconv convert` writes.
func TestPageInChromium(t *testing.T) {
	chromium := testpaths.Chromium(t)
	root := testpaths.RepoRoot(t)
	tmp := t.TempDir()
	s := startServer(t, filepath.Join(tmp, "data"))
	model := filepath.Join(root, "fixtures", "tflite", "cnn.tflite")
	downloads := filepath.Join(tmp, "downloads")
	if err := os.MkdirAll(downloads, 0o755); err != nil {
		t.Fatal(err)
	}

	ctx := chromiumTab(t, chromium, 3*time.Minute)

	var status, report string
	err := chromedp.Run(ctx,
		browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(downloads).WithEventsEnabled(true),
		chromedp.Navigate(s.url+"/"),
		chromedp.WaitVisible("#file", chromedp.ByID),
		chromedp.SetUploadFiles("#file", []string{model}, chromedp.ByID),
		chromedp.SetValue("#action", "convert", chromedp.ByID),
		chromedp.Click("#go", chromedp.ByID),
		chromedp.WaitVisible(`body[data-done="done"]`, chromedp.ByQuery),
		chromedp.Text("#status", &status, chromedp.ByID),
		chromedp.AttributeValue("#report", "srcdoc", &report, nil, chromedp.ByID),
		chromedp.Click(`a[id="artifact-model.onnx"]`, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("driving the page: %v\n%s", err, s.log)
	}
	if !strings.Contains(status, "verdict: pass") {
		t.Errorf("the page shows %q, want a pass verdict", status)
	}
	if !strings.Contains(report, "<svg") && !strings.Contains(report, "EQUIVALENT") {
		t.Errorf("the report shown inline is not the HTML report (%d bytes)", len(report))
	}
	// The download lands in the folder; compare it with the CLI's file.
	var got []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(downloads, "model.onnx")); err == nil && len(b) > 0 {
			got = b
			break
		}
	}
	if got == nil {
		entries, _ := os.ReadDir(downloads)
		t.Fatalf("no model.onnx downloaded (folder holds %v)", entries)
	}
	out := filepath.Join(tmp, "cli.onnx")
	cmd := exec.Command(onnxconvBin(t), "convert", model, out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("onnxconv convert: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the downloaded model (%d bytes) differs from onnxconv convert's (%d bytes)", len(got), len(want))
	}
	t.Logf("page: %s; downloaded %d bytes, identical to onnxconv convert", strings.SplitN(status, "\n", 2)[0], len(got))
}

// TestPageTargetsAfterToken: on a server with tokens the page lists no
// target before a token is entered (401), and every target profile once
// one is typed in.
func TestPageTargetsAfterToken(t *testing.T) {
	chromium := testpaths.Chromium(t)
	all, err := profiles.All()
	if err != nil {
		t.Fatal(err)
	}
	tm := newTeam(t, serve.Config{})
	ctx := chromiumTab(t, chromium, time.Minute)
	var before, after int
	err = chromedp.Run(ctx,
		chromedp.Navigate(tm.http.URL+"/"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.Sleep(500*time.Millisecond), // the first /v1/targets answers 401
		chromedp.Evaluate(`document.querySelectorAll("#target option").length`, &before),
		chromedp.SendKeys("#token", tm.tokens["alice"]+"\t", chromedp.ByID),
		chromedp.Poll(`document.querySelectorAll("#target option").length`, &after, chromedp.WithPollingTimeout(30*time.Second)),
	)
	if err != nil {
		t.Fatalf("driving the page: %v", err)
	}
	if before != 0 || after != len(all) {
		t.Errorf("targets listed: %d before the token, %d after, want 0 and the %d profiles", before, after, len(all))
	}
}

// chromiumTab starts headless Chromium and returns a tab's context, ended
// after limit or with the test. Its profile is a folder of its own, removed
// after the browser: Chromium's helper processes may still write there for
// a moment after the browser exits, which made t.TempDir's strict removal
// fail now and then ("directory not empty"), so the removal is retried.
func chromiumTab(t *testing.T, chromium string, limit time.Duration) context.Context {
	t.Helper()
	profile, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(profile))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, limit)
	t.Cleanup(func() {
		cancel()
		cancelTab()
		cancelAlloc()
		for try := 0; ; try++ {
			err := os.RemoveAll(profile)
			if err == nil {
				return
			}
			if try == 50 {
				t.Logf("Chromium's profile %s not removed: %v", profile, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return ctx
}
