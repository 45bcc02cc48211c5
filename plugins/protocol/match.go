package protocol

import "github.com/onnxconv/onnxconv/importers"

// HeadSize is how many leading bytes of a file Detect is given
// (importers.HeadSize: one size for built-ins and plugins).
const HeadSize = importers.HeadSize
