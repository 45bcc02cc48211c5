package serve

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/onnxconv/onnxconv/batch"
	"github.com/onnxconv/onnxconv/exporters/profiles"
)

//go:embed openapi.yaml
var openAPI []byte

//go:embed index.html
var indexHTML []byte

// Handler returns the server's HTTP API (see docs/serve.md and
// /v1/openapi.yaml).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /v1/openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(openAPI)
	})
	mux.HandleFunc("POST /v1/jobs", s.auth(s.submit))
	mux.HandleFunc("GET /v1/jobs/{id}", s.auth(s.status))
	mux.HandleFunc("GET /v1/jobs/{id}/artifacts/{name}", s.auth(s.artifact))
	mux.HandleFunc("GET /v1/jobs", s.auth(s.list))
	mux.HandleFunc("POST /v1/jobs/{id}/cancel", s.auth(s.cancel))
	mux.HandleFunc("DELETE /v1/jobs/{id}", s.auth(s.remove))
	mux.HandleFunc("GET /v1/formats", s.auth(s.formats))
	mux.HandleFunc("GET /v1/targets", s.auth(s.targets))
	return s.audit(s.sameSite(mux))
}

// sameSite guards a server without tokens, which serves this machine
// only: a request must name a loopback Host (a DNS name rebound to
// 127.0.0.1 does not), and a browser's Origin, when sent, must be this
// server, so that a web page the user opens can neither submit jobs nor
// read them. Every answer is nosniff.
func (s *Server) sameSite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if s.cfg.Tokens == nil {
			if !loopbackHost(r.Host) {
				writeError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name or address: this server without tokens serves 127.0.0.1, ::1 and localhost only", r.Host))
				return
			}
			if o := r.Header.Get("Origin"); o != "" {
				u, err := url.Parse(o)
				if err != nil || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
					writeError(w, http.StatusForbidden, fmt.Sprintf("Origin %q is not this server: a page from another site may not call it", o))
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost tells whether a Host header names this machine's loopback.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// auditKey carries the audit fields a handler fills.
type auditKey struct{}

type auditInfo struct {
	Token   string `json:"token,omitempty"`
	Job     string `json:"job,omitempty"`
	SHA256  string `json:"model_sha256,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	// who is the caller (zero without tokens).
	who caller
}

// statusWriter records the status code for the audit line.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// audit writes one JSON line per request to cfg.Audit: time, method,
// path, status, token ID, job, model hash, verdict.
func (s *Server) audit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := &auditInfo{}
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), auditKey{}, info)))
		s.metrics.bytesOut.Add(float64(sw.bytes))
		if s.cfg.Audit == nil {
			return
		}
		line, _ := json.Marshal(struct {
			Time   time.Time `json:"time"`
			Method string    `json:"method"`
			Path   string    `json:"path"`
			Status int       `json:"status"`
			MS     float64   `json:"ms"`
			*auditInfo
		}{start.UTC(), r.Method, r.URL.Path, sw.status, float64(time.Since(start).Microseconds()) / 1000, info})
		s.mu.Lock()
		_, _ = s.cfg.Audit.Write(append(line, '\n'))
		s.mu.Unlock()
	})
}

func auditOf(r *http.Request) *auditInfo {
	if a, ok := r.Context().Value(auditKey{}).(*auditInfo); ok {
		return a
	}
	return &auditInfo{}
}

// auth requires a valid bearer token when the server has tokens.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Tokens == nil {
			h(w, r)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		var who caller
		valid := false
		if ok {
			who, valid = s.cfg.Tokens.check(strings.TrimSpace(tok))
		}
		if !valid {
			w.Header().Set("WWW-Authenticate", `Bearer realm="onnxconv"`)
			writeError(w, http.StatusUnauthorized, "a valid bearer token is required (Authorization: Bearer TOKEN)")
			return
		}
		a := auditOf(r)
		a.Token, a.who = who.id, who
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	ready := s.ready
	s.mu.Unlock()
	if !ready {
		writeError(w, http.StatusServiceUnavailable, "not ready (starting or shutting down)")
		return
	}
	_, _ = io.WriteString(w, "ready\n")
}

func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-src 'self'")
	_, _ = w.Write(indexHTML)
}

// submit is POST /v1/jobs: multipart with a "model" file part (a model
// file, or a folder as .zip/.tar/.tar.gz) and an optional "spec" part.
func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.stopping:
		writeError(w, http.StatusServiceUnavailable, "the server is shutting down")
		return
	default:
	}
	// The submission takes its place in the queue and in its token's
	// quota before its body is read, as a job of the store being
	// received, so that concurrent uploads to any replica cannot overfill
	// either: the store admits one at a time.
	who := auditOf(r).who
	j := &Job{ID: newID(), State: StateReceiving, Created: time.Now().UTC(), Token: who.id}
	var room int64
	err := s.store.reserve(j, func(queued, active int, stored int64) error {
		room = s.cfg.MaxUpload
		if s.cfg.QuotaBytes > 0 {
			room = min(room, s.cfg.QuotaBytes-stored)
		}
		switch {
		case queued >= s.cfg.QueueSize:
			return &RequestError{Status: http.StatusTooManyRequests, Msg: fmt.Sprintf("the queue is full (%d jobs waiting); retry later", s.cfg.QueueSize)}
		case s.cfg.QuotaJobs > 0 && active >= s.cfg.QuotaJobs:
			return &RequestError{Status: http.StatusTooManyRequests, Msg: fmt.Sprintf("your token has %d jobs queued or running, its quota; retry when one ends", s.cfg.QuotaJobs)}
		case room <= 0:
			return &RequestError{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("your token's jobs keep %d bytes, its quota; delete finished jobs (DELETE /v1/jobs/ID)", s.cfg.QuotaBytes)}
		}
		return nil
	})
	var re *RequestError
	switch {
	case errors.As(err, &re):
		if re.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "30")
		}
		writeError(w, re.Status, re.Msg)
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "the job store is not answering; retry later")
		return
	}
	err = s.acceptWithin(w, r, j, room)
	if err != nil {
		// Its place is free again (the folder is gone already).
		_ = s.store.remove(j.ID)
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the upload is larger than the limit of %d bytes (the upload limit or your token's remaining quota)", room))
		case errors.As(err, &re):
			writeError(w, re.Status, re.Msg)
		default:
			writeError(w, http.StatusInternalServerError, "storing the upload failed (see the server's log)")
		}
		return
	}
	a := auditOf(r)
	a.Job, a.SHA256 = j.ID, j.ModelSHA256
	s.metrics.bytesIn.Add(float64(j.Bytes))
	writeJSON(w, http.StatusAccepted, map[string]any{"id": j.ID, "state": j.State, "url": "/v1/jobs/" + j.ID})
}

// acceptWithin reads the request's body, cut at room bytes, into job j
// (reserved, being received).
func (s *Server) acceptWithin(w http.ResponseWriter, r *http.Request, j *Job, room int64) error {
	if r.ContentLength > room {
		return &http.MaxBytesError{Limit: room}
	}
	r.Body = http.MaxBytesReader(w, r.Body, room)
	return s.accept(r, j, room)
}

// accept reads the request into job j's folder and queues it. room is
// what the job may keep on disk, upload and unpacked folder together.
func (s *Server) accept(r *http.Request, j *Job, room int64) error {
	ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "multipart/form-data" || params["boundary"] == "" {
		return badRequest("send multipart/form-data with a \"model\" file part and an optional \"spec\" part")
	}
	dir := s.jobDir(j.ID)
	if err := os.MkdirAll(filepath.Join(dir, "upload"), 0o700); err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(dir)
		}
	}()
	mr, err := r.MultipartReader()
	if err != nil {
		return badRequest("malformed multipart body: %v", err)
	}
	var spec []byte
	var upload string
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return err
			}
			return badRequest("malformed multipart body: %v", err)
		}
		switch p.FormName() {
		case "spec":
			spec, err = io.ReadAll(io.LimitReader(p, 64<<10+1))
			if err != nil {
				return badRequest("reading the spec: %v", err)
			}
			if len(spec) > 64<<10 {
				return &RequestError{Status: 413, Msg: "the spec is larger than 64 KiB"}
			}
		case "model":
			if upload != "" {
				return badRequest("more than one \"model\" part")
			}
			// The client's file name gives the extension and a name
			// for the report, never a path.
			upload = safeName(p.FileName())
			n, sum, err := saveUpload(p, filepath.Join(dir, "upload", upload))
			if err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					return err
				}
				return badRequest("reading the model part: %v", err)
			}
			j.Bytes, j.ModelSHA256 = n, sum
		default:
			_, _ = io.Copy(io.Discard, p)
		}
		_ = p.Close()
	}
	if upload == "" {
		return badRequest("no \"model\" file part")
	}
	if j.Bytes == 0 {
		return badRequest("the model file is empty")
	}
	if err := s.setSpec(j, spec); err != nil {
		return err
	}
	// The model goes under input/: a folder packed as an archive is
	// unpacked there, within limits; a file is moved there.
	in := filepath.Join(dir, "input")
	if kind := archiveKind(upload); kind != "" {
		target := filepath.Join(in, strings.TrimSuffix(strings.TrimSuffix(upload, filepath.Ext(upload)), ".tar"))
		lim := unpackLimits{bytes: s.cfg.MaxUnpacked, files: s.cfg.MaxFiles}
		if s.cfg.QuotaBytes > 0 {
			lim.bytes = min(lim.bytes, room-j.Bytes)
		}
		if err := s.unpackBounded(filepath.Join(dir, "upload", upload), kind, target, lim); err != nil {
			return err
		}
		rel, err := filepath.Rel(in, modelIn(target))
		if err != nil {
			return err
		}
		j.Model = filepath.ToSlash(rel)
		if strings.ContainsAny(j.Model, "*?[]{}\\") {
			return badRequest("the model's path in the archive, %q, has a glob character", j.Model)
		}
	} else {
		if err := os.MkdirAll(in, 0o700); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(dir, "upload", upload), filepath.Join(in, upload)); err != nil {
			return err
		}
		j.Model = upload
	}
	m, err := batch.ParseManifest(mustManifest(j), dir)
	if err != nil {
		return badRequest("spec: %v", err)
	}
	// done/total counts from the start (whichever replica runs it): the
	// actions are known now. One that cannot be planned fails when run.
	if planned, err := m.Expand(); err == nil {
		j.Total = len(planned)
	}
	j.Stored = dirSize(dir)
	j.State = StateQueued
	if err := s.store.put(j); err != nil {
		return err
	}
	s.metrics.submitted.WithLabelValues(kindOf(j)).Inc()
	ok = true
	s.queueDepth()
	select {
	case s.wake <- struct{}{}:
	default: // every worker is woken already
	}
	return nil
}

// unpackBounded unpacks an archive once one of the Workers places to
// unpack in is free (see Config.UnpackHook).
func (s *Server) unpackBounded(file, kind, target string, lim unpackLimits) error {
	state := func(waiting, unpacking int, holding bool) UnpackState {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.unpackWaiting += waiting
		s.unpacking += unpacking
		return UnpackState{Unpacking: s.unpacking, Waiting: s.unpackWaiting, Holding: holding}
	}
	st := state(1, 0, false)
	if s.cfg.UnpackHook != nil {
		s.cfg.UnpackHook(st)
	}
	s.unpacks <- struct{}{}
	defer func() { <-s.unpacks }()
	st = state(-1, 1, true)
	defer state(0, -1, false)
	if s.cfg.UnpackHook != nil {
		s.cfg.UnpackHook(st)
	}
	return unpack(file, kind, target, lim)
}

// setSpec checks and keeps the spec (default: convert, verified).
func (s *Server) setSpec(j *Job, spec []byte) error {
	spec = bytes.TrimSpace(spec)
	if len(spec) == 0 {
		spec = []byte(`{"convert": true}`)
	}
	var entry map[string]any
	if err := json.Unmarshal(spec, &entry); err != nil || entry == nil {
		return badRequest("spec: not a JSON object: %v", err)
	}
	if _, has := entry["models"]; has {
		return badRequest("spec: \"models\" is the uploaded file; leave it out")
	}
	if wh, has := entry["webhook"]; has {
		u, ok := wh.(string)
		if !ok {
			return badRequest("spec: webhook must be a URL")
		}
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return badRequest("spec: webhook %q is not an http(s) URL", u)
		}
		if !slices.Contains(s.cfg.WebhookHosts, pu.Host) {
			return badRequest("spec: webhook host %q is not allowed (the server's --webhook-host list)", pu.Host)
		}
		j.Webhook = u
	}
	j.Spec = json.RawMessage(spec)
	return nil
}

// kindOf is a job's action for metrics: the first action key of its spec.
func kindOf(j *Job) string {
	var entry map[string]any
	_ = json.Unmarshal(j.Spec, &entry)
	for _, k := range []string{"convert", "opset", "ml_opset", "targets", "plan", "check", "reference", "bench", "quantize", "fp16", "bf16", "optimize"} {
		if _, ok := entry[k]; ok {
			return k
		}
	}
	return "other"
}

func (s *Server) job(w http.ResponseWriter, r *http.Request) (*Job, bool) {
	id := r.PathValue("id")
	auditOf(r).Job = id
	j, err := s.store.get(id)
	if errors.Is(err, errNoJob) || (err == nil && (!s.owns(auditOf(r).who, j) || j.State == StateReceiving)) {
		// Another token's job is as absent as a job that never was.
		writeError(w, http.StatusNotFound, "no job "+id)
		return nil, false
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return nil, false
	}
	a := auditOf(r)
	a.SHA256, a.Verdict = j.ModelSHA256, string(j.Verdict)
	return j, true
}

// owns tells whether the caller may see and manage job j: its own
// token's jobs, every job for an admin token or on a server without
// tokens.
func (s *Server) owns(who caller, j *Job) bool {
	return s.cfg.Tokens == nil || who.admin || j.Token == who.id
}

// list is GET /v1/jobs?limit=N&after=ID: the caller's jobs (an admin's:
// all), oldest first, at most limit (default 50, at most 500) of them
// after job ID, without their records; "next" is the after of the next
// page.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit %q: give a number from 1 to 500", v))
			return
		}
		limit = n
	}
	after := r.URL.Query().Get("after")
	all, err := s.store.list()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "reading the job store failed")
		return
	}
	who := auditOf(r).who
	page := struct {
		Jobs []*Job `json:"jobs"`
		Next string `json:"next,omitempty"`
	}{Jobs: []*Job{}}
	skipping := after != ""
	for _, j := range all {
		if !s.owns(who, j) || j.State == StateReceiving {
			continue
		}
		if skipping {
			skipping = j.ID != after
			continue
		}
		if len(page.Jobs) == limit {
			page.Next = page.Jobs[limit-1].ID
			break
		}
		j.Records, j.Artifacts = nil, nil
		page.Jobs = append(page.Jobs, j)
	}
	if skipping {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no job %s to page after", after))
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.job(w, r); ok {
		writeJSON(w, http.StatusOK, j)
	}
}

func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	rel, ok := j.Artifacts[r.PathValue("name")]
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("job %s has no artifact %q (see its \"artifacts\")", j.ID, r.PathValue("name")))
		return
	}
	root, err := os.OpenRoot(filepath.Join(s.jobDir(j.ID), "out"))
	if err != nil {
		writeError(w, http.StatusNotFound, "the job's results are gone")
		return
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		writeError(w, http.StatusNotFound, "the artifact is gone")
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		writeError(w, http.StatusNotFound, "the artifact is gone")
		return
	}
	name := r.PathValue("name")
	// A report is shown as a document of its own origin, without scripts,
	// forms or outside resources.
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	if strings.HasSuffix(name, ".html") {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	} else if strings.HasSuffix(name, ".json") {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	}
	http.ServeContent(w, r, name, st.ModTime(), f)
}

// remove is DELETE /v1/jobs/{id}: a finished job and its files are
// deleted; a queued or running one must be canceled first (409).
func (s *Server) remove(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	if !j.State.Final() {
		writeError(w, http.StatusConflict, fmt.Sprintf("job %s is %s: cancel it first (POST /v1/jobs/%s/cancel)", j.ID, j.State, j.ID))
		return
	}
	if err := s.deleteJob(j); err != nil {
		writeError(w, http.StatusInternalServerError, "deleting the job failed")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// cancel is POST /v1/jobs/{id}/cancel: a queued or running job ends
// canceled.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	j, ok := s.job(w, r)
	if !ok {
		return
	}
	if j.State.Final() {
		writeError(w, http.StatusConflict, fmt.Sprintf("job %s is already %s", j.ID, j.State))
		return
	}
	j, err := s.store.update(j.ID, func(j *Job) error {
		if j.State.Final() {
			return errSkip
		}
		j.State, j.Finished = StateCanceled, time.Now().UTC()
		return nil
	})
	if err != nil {
		writeError(w, http.StatusConflict, "the job finished meanwhile")
		return
	}
	// Running here: stopped now; on another replica: its heartbeat sees
	// the state and stops it.
	s.mu.Lock()
	if cancel := s.cancels[j.ID]; cancel != nil {
		cancel()
	}
	s.mu.Unlock()
	s.metrics.finished(j)
	writeJSON(w, http.StatusOK, j)
}

func (s *Server) formats(w http.ResponseWriter, _ *http.Request) {
	type format struct {
		Name       string   `json:"name"`
		Format     string   `json:"format"`
		Summary    string   `json:"summary"`
		Extensions []string `json:"extensions"`
	}
	var out []format
	if s.cfg.Env.Importers != nil {
		for _, imp := range s.cfg.Env.Importers.All() {
			d := imp.Describe()
			out = append(out, format{d.Name, d.FormatName(), d.Summary, d.Extensions})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) targets(w http.ResponseWriter, _ *http.Request) {
	all, err := profiles.All()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	type target struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		MinOpset    int    `json:"min_opset"`
		MaxOpset    int    `json:"max_opset"`
	}
	out := make([]target, 0, len(all))
	for _, p := range all {
		out = append(out, target{p.Name, p.Description, p.MinOpset, p.MaxOpset})
	}
	writeJSON(w, http.StatusOK, out)
}
