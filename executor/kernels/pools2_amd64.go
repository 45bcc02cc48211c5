package kernels

import (
	"os"

	"golang.org/x/sys/cpu"
)

// init installs the whole-row max pool kernels when the CPU has
// AVX-512F and BMI2 (their masks), unless ONNXCONV_SGEMM_KERNEL asks for
// AVX2 or the generic kernels (then the row path and the gapped blocks
// pool, so that both paths can be tested on one machine).
func init() {
	if want := os.Getenv(KernelEnv); want == "avx2" || want == "generic" {
		return
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasBMI2 {
		maxPoolS2K3 = poolRowsKernels{maxPoolS2K3AVX512, maxPoolS2K3ShortAVX512}
		maxPoolS2K2 = poolRowsKernels{maxPoolS2K2AVX512, maxPoolS2K2ShortAVX512}
		maxPoolS1K3 = poolRowsKernels{maxPoolS1K3AVX512, maxPoolS1K3ShortAVX512}
	}
}
