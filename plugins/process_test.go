//go:build unix

package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// envHelperInherit makes the test binary a program RunProcess starts for
// TestRunProcessPassesHostOptions: it prints the options it inherited as
// JSON and exits 3.
const envHelperInherit = "ONNXCONV_PLUGINS_TEST_HELPER_INHERIT"

func helperInherit() int {
	o, err := InheritedOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, _ := json.Marshal(o)
	fmt.Println(string(b))
	return 3
}

// TestRunProcessPassesHostOptions: a program started by RunProcess opens
// its plugins with its caller's folders and limits (InheritedOptions),
// and what it printed reaches the caller also when it fails.
func TestRunProcessPassesHostOptions(t *testing.T) {
	t.Setenv(envHelperInherit, "1")
	want := Options{PluginPath: "/plugins/a:/plugins/b", UserDir: "/user/plugins", CallTimeout: 42 * time.Second,
		DescribeTimeout: 7 * time.Second, StartTimeout: 9 * time.Second, MemoryLimit: 123 << 20}
	out, err := RunProcess(context.Background(), want, "helper", "print", "", []string{os.Args[0]})
	var pe *PluginError
	var ee *exec.ExitError
	if !errors.As(err, &pe) || !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("RunProcess = %v; want the helper's exit 3 as a *PluginError", err)
	}
	var got Options
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the helper's output %q: %v", out, err)
	}
	if got.PluginPath != want.PluginPath || got.UserDir != want.UserDir || got.CallTimeout != want.CallTimeout ||
		got.DescribeTimeout != want.DescribeTimeout || got.StartTimeout != want.StartTimeout || got.MemoryLimit != want.MemoryLimit || got.NoThirdParty {
		t.Errorf("inherited %+v, want %+v", got, want)
	}
	// Not started by RunProcess: the zero options.
	if o, err := InheritedOptions(); err != nil || o.PluginPath != "" || o.MemoryLimit != 0 {
		t.Errorf("InheritedOptions in the test process = %+v, %v; want zero", o, err)
	}
}
