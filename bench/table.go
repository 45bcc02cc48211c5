package bench

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints results as a table, one row per model and side, with
// the ratio of the medians and, for more than one model with a ratio,
// their geometric mean.
func WriteTable(w io.Writer, results []*Result) error {
	if len(results) == 0 {
		return nil
	}
	r0 := results[0]
	if _, err := fmt.Fprintf(w, "threads %d, SGEMM kernel %s, integer GEMM kernel %s, %d CPUs, load average %s\n", r0.Threads, r0.Kernel, r0.IntKernel, r0.CPUs, r0.LoadAvg); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tside\truns\tp50 ms\tp90 ms\tp99 ms\tmin ms\truns/s\tCPU ms\tpeak RSS MiB\tratio p50\tratio CPU\t")
	var ratios, cpuRatios []float64
	for _, r := range results {
		name := modelName(r.Model)
		row(tw, name, &r.Executor, float64(r.PeakRSS)/(1<<20), "", "")
		if r.Other != nil {
			cr := ""
			if r.CPURatio > 0 {
				cr = fmt.Sprintf("%.2f", r.CPURatio)
				cpuRatios = append(cpuRatios, r.CPURatio)
			}
			row(tw, "", r.Other, 0, fmt.Sprintf("%.2f", r.Ratio), cr)
			ratios = append(ratios, r.Ratio)
		}
	}
	if len(ratios) > 1 {
		cr := ""
		if len(cpuRatios) == len(ratios) {
			cr = fmt.Sprintf("%.2f", GeoMean(cpuRatios))
		}
		fmt.Fprintf(tw, "geometric mean\t\t\t\t\t\t\t\t\t\t%.2f\t%s\t\n", GeoMean(ratios), cr)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		for _, p := range r.SlowPaths {
			if _, err := fmt.Fprintf(w, "%s: slow path (per element, no kernel): %s\n", modelName(r.Model), p); err != nil {
				return err
			}
		}
	}
	return nil
}

func row(w io.Writer, model string, s *Stats, rss float64, ratio, cpuRatio string) {
	rssS, cpu := "", ""
	if rss > 0 {
		rssS = fmt.Sprintf("%.0f", rss)
	}
	if s.CPU > 0 {
		cpu = ms(s.CPU)
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t\n", model, s.Name, s.Runs, ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Min), s.ThroughputRPS, cpu, rssS, ratio, cpuRatio)
}

func ms(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v < 1:
		return fmt.Sprintf("%.3f", v)
	case v < 100:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// modelName is the model's folder name for model.onnx files, else the
// file name.
func modelName(p string) string {
	if base := filepath.Base(p); strings.EqualFold(base, "model.onnx") {
		return filepath.Base(filepath.Dir(p))
	}
	return filepath.Base(p)
}
