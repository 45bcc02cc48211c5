package kernels

import "golang.org/x/sys/cpu"

func init() {
	if cpu.X86.HasAVX2 {
		scaleShift = scaleShiftSIMD
	}
}

// scaleShiftAVX2 sets y[i] = float32(x[i]·sc) + sh for i < n (VMULPS then
// VADDPS: two roundings, as the Go loop); n is a multiple of 8, y may be
// x. Hand-written in scaleshift_amd64.s.
//
//go:noescape
func scaleShiftAVX2(n int, sc, sh float32, x, y *float32)

// scaleShiftSIMD runs the multiple-of-8 head with AVX2 and the tail in Go.
func scaleShiftSIMD(y []float32, sc, sh float32) {
	n := len(y) &^ 7
	if n > 0 {
		scaleShiftAVX2(n, sc, sh, &y[0], &y[0])
	}
	scaleShiftGeneric(y[n:], sc, sh)
}
