package serve

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus metrics, on a registry of its own
// (no global state): jobs by state and kind, queue depth, running jobs,
// job durations, verification verdicts, bytes in and out.
type metrics struct {
	reg        *prometheus.Registry
	submitted  *prometheus.CounterVec
	ended      *prometheus.CounterVec
	verdicts   *prometheus.CounterVec
	queueDepth prometheus.Gauge
	running    prometheus.Gauge
	duration   prometheus.Histogram
	bytesIn    prometheus.Counter
	bytesOut   prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		submitted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "onnxconv_jobs_submitted_total",
			Help: "Jobs accepted, by kind (the spec's action)."}, []string{"kind"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "onnxconv_jobs_ended_total",
			Help: "Jobs that reached an end state (done, failed, canceled), by state and kind."}, []string{"state", "kind"}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "onnxconv_job_verdicts_total",
			Help: "Verdicts of finished jobs: pass, fail (not equivalent, blocked, invalid), error."}, []string{"verdict"}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "onnxconv_queue_depth", Help: "Jobs waiting to run."}),
		running:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "onnxconv_jobs_running", Help: "Jobs running now."}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "onnxconv_job_duration_seconds",
			Help: "Run time of finished jobs.", Buckets: prometheus.ExponentialBuckets(0.05, 2.5, 12)}),
		bytesIn:  prometheus.NewCounter(prometheus.CounterOpts{Name: "onnxconv_upload_bytes_total", Help: "Bytes of models uploaded."}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{Name: "onnxconv_response_bytes_total", Help: "Bytes of responses sent."}),
	}
	m.reg.MustRegister(m.submitted, m.ended, m.verdicts, m.queueDepth, m.running, m.duration, m.bytesIn, m.bytesOut)
	return m
}

// seen counts a job found in the store at start, so that the counters
// cover the store's whole history.
func (m *metrics) seen(j *Job) {
	m.submitted.WithLabelValues(kindOf(j)).Inc()
	if j.State.Final() {
		m.ended.WithLabelValues(string(j.State), kindOf(j)).Inc()
		if j.Verdict != "" {
			m.verdicts.WithLabelValues(string(j.Verdict)).Inc()
		}
	}
}

// finished counts a job that reached an end state.
func (m *metrics) finished(j *Job) {
	m.ended.WithLabelValues(string(j.State), kindOf(j)).Inc()
	if j.Verdict != "" {
		m.verdicts.WithLabelValues(string(j.Verdict)).Inc()
	}
	if !j.Started.IsZero() && !j.Finished.IsZero() {
		m.duration.Observe(j.Finished.Sub(j.Started).Seconds())
	}
}
