// Command misbehave is a test plugin whose behaviour is chosen by its name:
// as onnxconv-plugin-MODE (third-party form) or with the arguments
// `__plugin serve MODE` (built-in form). Modes:
//
//	good       importer (magic "GOODMODEL" at offset 4, extension .good) and
//	           exporter (target "optext": one op type a line)
//	panic      Import panics
//	gopanic    Import starts a goroutine that panics
//	hang       Import never returns (after writing its pid to opts["pidfile"])
//	exit       Import calls os.Exit(3)
//	garbage    writes garbage to stdout before the handshake
//	slowstart  sleeps before serving
//	memhog     Import allocates opts["mb"] MiB
//	badoutput  ImportFile writes a file that is not a model
//	nooutput   ImportFile writes nothing
//	failing    Import returns an error
//	leakpath   ImportFile returns an error naming its output path
//	spawner    Import starts `sleep 600`, writes its pid to opts["pidfile"], hangs
//
// The importers read a text file whose non-empty lines are the op types of
// a chain of nodes; a line holding GOODMODEL (the magic) is skipped.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

func main() {
	mode := strings.TrimPrefix(filepath.Base(os.Args[0]), "onnxconv-plugin-")
	if len(os.Args) == 4 && os.Args[1] == "__plugin" && os.Args[2] == "serve" {
		mode = os.Args[3]
	}
	imp := sdk.Importer{Name: mode, Version: "1.0", Extensions: []string{"." + mode}, Import: chain}
	var exp *sdk.Exporter
	switch mode {
	case "good":
		imp.Format = "goodfmt"
		imp.Magic = []sdk.Magic{{Offset: 4, Bytes: []byte("GOODMODEL")}}
		exp = &sdk.Exporter{Name: mode, Version: "1.0", Targets: []string{"optext"}, Export: opText}
	case "panic":
		imp.Import = func(context.Context, []byte, map[string]string) (*onnxpb.ModelProto, error) {
			panic("boom in Import")
		}
	case "gopanic":
		imp.Import = func(context.Context, []byte, map[string]string) (*onnxpb.ModelProto, error) {
			go func() { panic("boom in a goroutine") }()
			time.Sleep(time.Hour)
			return nil, nil
		}
	case "hang":
		imp.Import = func(_ context.Context, _ []byte, opts map[string]string) (*onnxpb.ModelProto, error) {
			if f := opts["pidfile"]; f != "" {
				if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
					return nil, err
				}
			}
			select {}
		}
	case "exit":
		imp.Import = func(context.Context, []byte, map[string]string) (*onnxpb.ModelProto, error) {
			// Straight to file descriptor 2: go-plugin's stdio stream
			// (os.Stderr once serving) is delivered asynchronously, so a
			// line written there just before exiting may arrive after this
			// one, or not at all.
			os.NewFile(2, "stderr").WriteString("giving up for good\n")
			os.Exit(3)
			return nil, nil
		}
	case "garbage":
		fmt.Println("Welcome to my totally legit plugin!")
	case "slowstart":
		time.Sleep(time.Hour)
	case "memhog":
		imp.Import = func(ctx context.Context, in []byte, opts map[string]string) (*onnxpb.ModelProto, error) {
			mb, err := strconv.Atoi(opts["mb"])
			if err != nil {
				return nil, fmt.Errorf("option mb: %w", err)
			}
			// 4 MiB blocks, one byte a page written: like a parser
			// filling buffers, without spending seconds on page faults.
			var blocks [][]byte
			for range mb / 4 {
				b := make([]byte, 4<<20)
				for i := 0; i < len(b); i += 64 << 10 {
					b[i] = 1
				}
				blocks = append(blocks, b)
			}
			sdk.Warn(ctx, "allocated %d MiB", 4*len(blocks))
			return chain(ctx, in, opts)
		}
	case "badoutput":
		imp.ImportFile = func(_ context.Context, _, out string, _ map[string]string) error {
			return os.WriteFile(out, []byte("this is not an ONNX model at all"), 0o644)
		}
	case "nooutput":
		imp.ImportFile = func(context.Context, string, string, map[string]string) error { return nil }
	case "failing":
		imp.Import = func(context.Context, []byte, map[string]string) (*onnxpb.ModelProto, error) {
			return nil, errors.New("line 3: unknown op \"Frobnicate\"")
		}
	case "leakpath":
		imp.ImportFile = func(_ context.Context, _, out string, _ map[string]string) error {
			return fmt.Errorf("cannot write %s: disk full", out)
		}
	case "spawner":
		imp.Import = func(_ context.Context, _ []byte, opts map[string]string) (*onnxpb.ModelProto, error) {
			cmd := exec.Command("sleep", "600")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			if err := os.WriteFile(opts["pidfile"], []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
				return nil, err
			}
			select {}
		}
	}
	sdk.Serve(sdk.Plugin{Importer: &imp, Exporter: exp})
}

// chain builds a model whose graph is a chain of the op types listed in in.
func chain(ctx context.Context, in []byte, _ map[string]string) (*onnxpb.ModelProto, error) {
	g := &onnxpb.GraphProto{Name: proto.String("chain")}
	prev := "X"
	for i, line := range strings.Split(string(in), "\n") {
		op := strings.TrimSpace(line)
		if op == "" || bytes.Contains([]byte(op), []byte("GOODMODEL")) {
			continue
		}
		out := fmt.Sprintf("t%d", i)
		g.Node = append(g.Node, &onnxpb.NodeProto{Name: proto.String(fmt.Sprintf("n%d", i)), OpType: proto.String(op),
			Input: []string{prev}, Output: []string{out}})
		prev = out
	}
	g.Input = []*onnxpb.ValueInfoProto{{Name: proto.String("X")}}
	g.Output = []*onnxpb.ValueInfoProto{{Name: proto.String(prev)}}
	if len(g.Node) == 0 {
		sdk.Warn(ctx, "empty chain")
	}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: proto.Int64(13)}}}, nil
}

// opText writes the op types of model, one a line.
func opText(_ context.Context, model *onnxpb.ModelProto, _ string, _ map[string]string, w io.Writer) error {
	for _, n := range model.GetGraph().GetNode() {
		if _, err := fmt.Fprintln(w, n.GetOpType()); err != nil {
			return err
		}
	}
	return nil
}
