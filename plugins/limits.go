package plugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The environment variables that set the limits of plugin calls when
// Options leaves them at 0: the memory each plugin process may take
// (bytes, or with a KiB, MiB, GiB suffix: "2GiB") and the time each call
// (an import, a run) may take (a Go duration: "60s", "10m").
const (
	EnvMemoryLimit = "ONNXCONV_IMPORT_MEMORY_LIMIT"
	EnvTimeLimit   = "ONNXCONV_IMPORT_TIME_LIMIT"
)

// limitsFromEnv fills o's memory limit and call time limit from the
// environment where o leaves them unset.
func limitsFromEnv(o *Options) error {
	if v := os.Getenv(EnvMemoryLimit); v != "" && o.MemoryLimit == 0 {
		n, err := parseBytes(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("%s=%q: give a size such as 2GiB or 512MiB", EnvMemoryLimit, v)
		}
		o.MemoryLimit = n
	}
	if v := os.Getenv(EnvTimeLimit); v != "" && o.CallTimeout == 0 {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s=%q: give a duration such as 60s or 10m", EnvTimeLimit, v)
		}
		o.CallTimeout = d
	}
	return nil
}

func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suf)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > (1<<62)/mult {
		return 0, errors.New("not a size")
	}
	return n * mult, nil
}

// gerund is what a call of op was doing ("importing", "running").
func gerund(op string) string {
	switch op {
	case "run":
		return "running"
	case "":
		return "calling"
	}
	return strings.TrimSuffix(op, "e") + "ing"
}

// formatDuration writes d as a limit ("60 s", "10 min", "1.5s").
func formatDuration(d time.Duration) string {
	switch {
	case d%time.Minute == 0 && d >= 5*time.Minute:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return d.Round(time.Millisecond).String()
}

// doing names what a call was doing, for limit messages ("while
// importing model.pb").
func doing(op, input string) string {
	s := "while " + gerund(op)
	if input != "" {
		s += " " + input
	}
	return s
}

// timeLimitDetail says that a call hit its time limit.
func timeLimitDetail(op, input string, timeout time.Duration) string {
	return fmt.Sprintf("time limit %s exceeded %s: did not finish within %s; the plugin was killed (set %s to allow more)",
		formatDuration(timeout), doing(op, input), timeout.Round(time.Millisecond), EnvTimeLimit)
}

// canceledDetail says that a call was canceled (an interrupt, or the
// caller's own deadline) and why, when the context says.
func canceledDetail(ctx context.Context, op, input string) string {
	why := ""
	if c := context.Cause(ctx); c != nil && c != ctx.Err() {
		why = " (" + c.Error() + ")"
	}
	return fmt.Sprintf("canceled%s %s, not by a limit of the plugin; the plugin was killed", why, doing(op, input))
}

// memoryLimitDetail says that a plugin process ran out of its memory
// limit.
func memoryLimitDetail(op, input string, limit int64, how, key string) string {
	return fmt.Sprintf("memory limit %s exceeded %s: the plugin exceeded its memory limit of %s and %s: %s (set %s to allow more)",
		formatBytes(limit), doing(op, input), formatBytes(limit), how, key, EnvMemoryLimit)
}
