package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// notify POSTs a finished job to its webhook, retried with backoff (1 s,
// 2 s, 4 s, … five tries) until a 2xx answer; in the background, waited
// for by Shutdown.
func (s *Server) notify(j *Job) {
	if j.Webhook == "" {
		return
	}
	body, err := json.Marshal(j)
	if err != nil {
		return
	}
	s.webhooks.Add(1)
	go func() {
		defer s.webhooks.Done()
		client := &http.Client{Timeout: 10 * time.Second,
			// Never follow a redirect to a host that is not allowed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		wait := time.Second
		for try := 0; try < 5; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.Webhook, bytes.NewReader(body))
			if err != nil {
				cancel()
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Onnxconv-Job", j.ID)
			resp, err := client.Do(req)
			cancel()
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode/100 == 2 {
					return
				}
			}
			select {
			case <-time.After(wait):
			case <-s.stopping:
				return
			}
			wait *= 2
		}
	}()
}
