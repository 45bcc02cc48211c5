package serve

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Listen listens on addr; with a certificate and key (PEM files) it
// serves TLS 1.2 or later, so that bearer tokens do not cross the network
// in clear. Give both or neither.
func Listen(addr, certFile, keyFile string) (net.Listener, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("serve: give both --tls-cert and --tls-key, or neither")
	}
	var cfg *tls.Config
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("serve: --tls-cert %s / --tls-key %s: %w", certFile, keyFile, err)
		}
		cfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	return ln, nil
}

// CheckAddr refuses an address that is not loopback when the server has
// no tokens: without authentication it serves this machine only.
func CheckAddr(addr string, haveTokens bool) error {
	if haveTokens {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve: --addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("serve: --addr %q is not a loopback address: without --tokens the server binds only to 127.0.0.1, ::1 or localhost (make tokens with 'onnxconv serve token ID')", addr)
	}
	return nil
}

// HTTPServer returns an http.Server for h with the timeouts that keep
// slow or stalled clients from holding connections: 10 s for the
// headers, 15 min for a whole request (an upload of the largest model on a
// slow link) and its response, 2 min idle, 64 KiB of headers.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       maxRequest,
		WriteTimeout:      maxRequest,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// maxRequest bounds the time to read a request (an upload) and to write
// an answer.
const maxRequest = 15 * time.Minute
