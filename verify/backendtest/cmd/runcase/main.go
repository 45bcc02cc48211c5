// Command runcase runs ONNX backend-test cases with the executor in this
// process and prints each full error (a development aid for executor
// work: 'onnxconv test' runs cases in worker processes and shortens the
// reasons to a line). It sits with the loader it drives, above the
// executor, which knows nothing of verify.
//
//	go run ./verify/backendtest/cmd/runcase ../shared/onnx-v1.22/backend-tests/node/test_abs ...
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/executor"
	"github.com/onnxconv/onnxconv/verify/backendtest"
)

func main() {
	for _, dir := range os.Args[1:] {
		c, err := backendtest.Load(dir)
		if err == nil {
			defer c.Close()
			err = backendtest.Run(context.Background(), c, func(m *canonical.Model) (backendtest.Runner, error) {
				return executor.New(m, executor.Options{})
			})
		}
		if err != nil {
			fmt.Printf("%s: %v\n", dir, err)
			continue
		}
		fmt.Printf("%s: ok\n", dir)
	}
}
