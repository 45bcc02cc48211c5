package protocol

import (
	"github.com/onnxconv/onnxconv/formats/formatinfo"
)

// HeadSize is how many leading bytes of a file Detect is given
// (formatinfo.HeadSize: one size for built-ins and plugins).
const HeadSize = formatinfo.HeadSize
