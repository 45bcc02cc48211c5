package executor

import (
	"os"
	"runtime"
	"strconv"
)

// temporary experiment knob (to be removed)
func speedSplitTmp() int {
	if v, err := strconv.Atoi(os.Getenv("ONNXCONV_SPLIT_TMP")); err == nil {
		return v
	}
	return runtime.GOMAXPROCS(0)
}
