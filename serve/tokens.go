package serve

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Tokens are the bearer tokens the server accepts, kept hashed: the file
// holds one "ID SHA256" line per token (hex of the SHA-256 of the token),
// never the token itself, optionally followed by the word "admin" for a
// token that sees and manages every token's jobs ("ID SHA256 admin").
// NewToken makes a token and its line.
type Tokens struct {
	ids    []string
	hashes [][sha256.Size]byte
	admin  []bool
}

var tokenIDRE = regexp.MustCompile(`^[A-Za-z0-9_.@-]{1,64}$`)

// LoadTokens reads a tokens file.
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	defer f.Close()
	return parseTokens(f, path)
}

func parseTokens(r io.Reader, path string) (*Tokens, error) {
	t := &Tokens{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 || !tokenIDRE.MatchString(f[0]) || (len(f) == 3 && f[2] != "admin") {
			return nil, fmt.Errorf("%s:%d: want \"ID SHA256-HEX\" or \"ID SHA256-HEX admin\" (make a line with 'onnxconv serve token ID')", path, n)
		}
		h, err := hex.DecodeString(f[1])
		if err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("%s:%d: %q is not a SHA-256 in hex (the file holds hashes, not tokens)", path, n, f[1])
		}
		t.ids = append(t.ids, f[0])
		t.hashes = append(t.hashes, [sha256.Size]byte(h))
		t.admin = append(t.admin, len(f) == 3)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(t.ids) == 0 {
		return nil, fmt.Errorf("%s: no tokens", path)
	}
	return t, nil
}

// caller is who sent a request: a token's ID and whether it is an admin.
type caller struct {
	id    string
	admin bool
}

// check returns the caller the token names, or false.
func (t *Tokens) check(token string) (caller, bool) {
	h := sha256.Sum256([]byte(token))
	var c caller
	ok := false
	for i, want := range t.hashes {
		// Compare with every hash in constant time per hash.
		if subtle.ConstantTimeCompare(h[:], want[:]) == 1 {
			c, ok = caller{id: t.ids[i], admin: t.admin[i]}, true
		}
	}
	return c, ok
}

// NewToken returns a new random token for id and the line of the tokens
// file that accepts it.
func NewToken(id string) (token, line string, err error) {
	if !tokenIDRE.MatchString(id) {
		return "", "", fmt.Errorf("token ID %q: use 1 to 64 of A-Z a-z 0-9 _ . @ -", id)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = "oct_" + base64.RawURLEncoding.EncodeToString(b)
	h := sha256.Sum256([]byte(token))
	return token, id + " " + hex.EncodeToString(h[:]), nil
}
