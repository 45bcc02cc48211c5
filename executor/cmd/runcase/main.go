// Command runcase runs one ONNX backend-test case with the executor and
// prints the full error (a development aid for executor work).
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
