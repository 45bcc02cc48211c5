package tflite

import (
	"os"
	"strings"
	"testing"
)

// TestNoReadPastTheEnd imports a fuzzer-found file (testdata/past_end.tflite,
// 1,872 bytes) whose tensor name claims 16 MB, from a buffer whose capacity
// runs on past the file, with invalid UTF-8 there. The name must be refused
// as outside the file: before, the flatbuffer accessors sliced into the
// spare capacity and sanitized 16 MB strings (seconds per tensor; the
// fuzzer's shared buffer made it look like a hang).
func TestNoReadPastTheEnd(t *testing.T) {
	data, err := os.ReadFile("testdata/past_end.tflite")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(data), len(data)+64<<20)
	copy(buf, data)
	spare := buf[len(data):cap(buf)]
	for i := range spare {
		spare[i] = 0xff
	}
	if _, err = Import(buf, Options{}); err == nil {
		t.Fatal("imported a file whose tensor name lies past its end")
	}
	if !strings.Contains(err.Error(), "out of range") {
		t.Errorf("error %q does not say the file's bytes ran out", err)
	}
}
