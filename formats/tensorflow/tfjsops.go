package tensorflow

//go:generate go run ./internal/gentfjsops -modules ../../node_modules -o tfjs_oplist.go

// TFJSOp is one op of TF.js's graph-model op list.
type TFJSOp struct {
	Op       string `json:"op"`
	Category string `json:"category"`
}
