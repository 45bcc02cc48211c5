package reduce

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/fsys"
	"github.com/onnxconv/onnxconv/verify"
)

// Bundle says what the caller knows of a reduction, for the bundle's
// manifest and README.
type Bundle struct {
	// Command is the command line that made the bundle.
	Command []string
	// Tool is the tool and its version.
	Tool string
	// Source is the path of the whole model.
	Source string
	// Sides say what computed A and B, with their versions.
	Sides [2]string
	// Replay are the commands, run in the bundle's folder, that replay
	// it, each with what it shows.
	Replay []Replay
}

// Replay is a command that replays the bundle.
type Replay struct {
	Command string `json:"command"`
	Shows   string `json:"shows"`
}

// The files of a bundle.
const (
	ModelFile    = "model.onnx"
	DataDir      = "test_data_set_0" // inputs and the reference's outputs
	CandidateDir = "outputs_b"       // B's outputs
	ManifestFile = "reduce.json"
	ReadmeFile   = "README.md"
	SumsFile     = "SHA256SUMS"
)

// Manifest is reduce.json.
type Manifest struct {
	Tool    string   `json:"tool"`
	Command []string `json:"command"`
	Created string   `json:"created"`
	Mode    string   `json:"mode"`
	A       string   `json:"a"`
	B       string   `json:"b"`
	// FailingSide is "A" or "B" in mode fails; Error its error.
	FailingSide string `json:"failing_side,omitempty"`
	Error       string `json:"error,omitempty"`
	Source      struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256,omitempty"`
		Nodes  int    `json:"nodes"`
	} `json:"source"`
	Nodes   []Node   `json:"nodes"`
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
	// ReferenceOutputs says which side computed the outputs of DataDir.
	ReferenceOutputs string `json:"reference_outputs"`
	// Comparison is the comparison of the sides on the reduced model
	// (mode diverges).
	Comparison []*verify.OutputResult `json:"comparison,omitempty"`
	Tests      int                    `json:"tests"`
	Stopped    bool                   `json:"stopped"`
	Replay     []Replay               `json:"replay"`
	// Files holds the SHA-256 of every other file of the bundle but
	// README.md and SHA256SUMS (which lists them all).
	Files map[string]string `json:"files"`
}

// Write writes res as a bundle into dir, which must not exist or be
// empty: the reduced model, its inputs and the reference's outputs as an
// ONNX backend-test folder (DataDir), B's outputs (CandidateDir, when B
// ran), reduce.json, README.md and SHA256SUMS.
func Write(dir string, res *Result, b Bundle) error {
	if res == nil || res.Model == nil {
		return errors.New("bundle: nothing reduced")
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("bundle: %s is not empty: give a new folder", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, DataDir), 0o755); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := canonical.Save(filepath.Join(dir, ModelFile), res.Model, canonical.SaveOptions{}); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	ref := 0 // the side whose outputs DataDir holds
	if res.Mode == Fails && res.Failing == 0 {
		ref = 1
	}
	files := []string{ModelFile}
	write := func(sub, prefix string, ts []*canonical.Tensor, names []*canonical.Value) error {
		for i, t := range ts {
			named := *t
			if i < len(names) {
				named.Name = names[i].Name
			}
			rel := filepath.ToSlash(filepath.Join(sub, prefix+"_"+strconv.Itoa(i)+".pb"))
			if err := canonical.WriteTensorFile(filepath.Join(dir, rel), &named); err != nil {
				return fmt.Errorf("bundle: %w", err)
			}
			files = append(files, rel)
		}
		return nil
	}
	ins := verify.GraphInputs(res.Model)
	if err := write(DataDir, "input", res.Inputs, ins); err != nil {
		return err
	}
	outs := res.Model.Graph.Outputs
	if err := write(DataDir, "output", res.Outputs[ref], outs); err != nil {
		return err
	}
	if ref == 0 && res.Outputs[1] != nil {
		if err := os.MkdirAll(filepath.Join(dir, CandidateDir), 0o755); err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		if err := write(CandidateDir, "output", res.Outputs[1], outs); err != nil {
			return err
		}
	}
	man, err := manifest(dir, res, b, ref, files)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ReadmeFile), []byte(readme(man)), 0o644); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	var sums strings.Builder
	for _, f := range append(files, ManifestFile, ReadmeFile) {
		sum := man.Files[f]
		if sum == "" {
			if sum, err = fsys.SHA256File(filepath.Join(dir, f)); err != nil {
				return fmt.Errorf("bundle: %w", err)
			}
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, f)
	}
	if err := os.WriteFile(filepath.Join(dir, SumsFile), []byte(sums.String()), 0o644); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

func manifest(dir string, res *Result, b Bundle, ref int, files []string) (*Manifest, error) {
	m := &Manifest{Tool: b.Tool, Command: b.Command, Created: time.Now().UTC().Format(time.RFC3339), Mode: res.Mode,
		A: b.Sides[0], B: b.Sides[1], Nodes: res.Nodes, Tests: res.Tests, Stopped: res.Stopped, Replay: b.Replay,
		ReferenceOutputs: b.Sides[ref], Files: map[string]string{}}
	if res.Mode == Fails {
		m.FailingSide, m.Error = "AB"[res.Failing:res.Failing+1], res.Error
	}
	if res.Report != nil {
		m.Comparison = res.Report.Outputs
	}
	m.Source.Path, m.Source.Nodes = b.Source, res.NodesBefore
	if b.Source != "" {
		if st, err := os.Stat(b.Source); err == nil && st.Mode().IsRegular() {
			sum, err := fsys.SHA256File(b.Source)
			if err != nil {
				return nil, fmt.Errorf("bundle: %w", err)
			}
			m.Source.SHA256 = sum
		}
	}
	for _, v := range verify.GraphInputs(res.Model) {
		m.Inputs = append(m.Inputs, v.Name)
	}
	for _, v := range res.Model.Graph.Outputs {
		m.Outputs = append(m.Outputs, v.Name)
	}
	for _, f := range files {
		sum, err := fsys.SHA256File(filepath.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		m.Files[f] = sum
	}
	return m, nil
}

// readme is the bundle's README.md.
func readme(m *Manifest) string {
	var b strings.Builder
	ops := make([]string, len(m.Nodes))
	for i, n := range m.Nodes {
		ops[i] = n.OpType
	}
	what := fmt.Sprintf("on which A (%s) and B (%s) compute outputs beyond tolerance apart", m.A, m.B)
	if m.Mode == Fails {
		side := m.A
		if m.FailingSide == "B" {
			side = m.B
		}
		what = fmt.Sprintf("that %s (side %s) fails to load or run, while the other side runs it", side, m.FailingSide)
	}
	fmt.Fprintf(&b, "# Reduced: %d node(s) that still %s\n\n", len(m.Nodes), map[string]string{Diverges: "diverge", Fails: "fail"}[m.Mode])
	fmt.Fprintf(&b, "`onnxconv reduce` cut `%s` (%d nodes) down to %d node(s) (%s) %s.\n", m.Source.Path, m.Source.Nodes, len(m.Nodes), strings.Join(ops, ", "), what)
	fmt.Fprintf(&b, "Values the dropped nodes computed are graph inputs here, fed with what the reference computed on the whole model.\n\n")
	b.WriteString("| file | what |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| `%s` | the reduced model: inputs %s, outputs %s |\n", ModelFile, codeList(m.Inputs), codeList(m.Outputs))
	fmt.Fprintf(&b, "| `%s/input_N.pb` | its inputs (ONNX TensorProto, named after the graph inputs) |\n", DataDir)
	fmt.Fprintf(&b, "| `%s/output_N.pb` | its outputs as %s computed them |\n", DataDir, m.ReferenceOutputs)
	if m.Mode == Diverges {
		fmt.Fprintf(&b, "| `%s/output_N.pb` | its outputs as %s computed them |\n", CandidateDir, m.B)
	}
	fmt.Fprintf(&b, "| `%s` | the facts: command, versions, nodes kept, comparison, SHA-256 of the files |\n", ManifestFile)
	fmt.Fprintf(&b, "| `%s` | SHA-256 of every file (`sha256sum -c %s`) |\n\n", SumsFile, SumsFile)
	b.WriteString("## Replay\n\nIn this folder:\n\n```sh\nsha256sum -c " + SumsFile + "\n")
	for _, r := range m.Replay {
		fmt.Fprintf(&b, "%s\n", r.Command)
	}
	b.WriteString("```\n\n")
	for _, r := range m.Replay {
		fmt.Fprintf(&b, "- `%s`: %s\n", r.Command, r.Shows)
	}
	if m.Mode == Fails {
		fmt.Fprintf(&b, "\n## The error\n\n```\n%s\n```\n", m.Error)
	}
	if len(m.Comparison) > 0 {
		b.WriteString("\n## What differs\n\n| output | max abs diff | ratio to tolerance | elements beyond |\n| --- | ---: | ---: | ---: |\n")
		for _, o := range m.Comparison {
			maxAbs := "—"
			if o.Float != nil {
				maxAbs = strconv.FormatFloat(o.Float.MaxAbs, 'g', 4, 64)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %d of %d |\n", o.Name, maxAbs, strconv.FormatFloat(o.Ratio, 'g', 4, 64), o.Mismatched, o.Elements)
		}
	}
	b.WriteString("\n## Made by\n\n")
	fmt.Fprintf(&b, "- tool: %s\n- command: `%s`\n- A: %s\n- B: %s\n- created: %s\n", m.Tool, strings.Join(m.Command, " "), m.A, m.B, m.Created)
	if m.Source.SHA256 != "" {
		fmt.Fprintf(&b, "- source SHA-256: `%s`\n", m.Source.SHA256)
	}
	fmt.Fprintf(&b, "- candidates tried: %d", m.Tests)
	if m.Stopped {
		b.WriteString(" (the bound on candidates ended the search: a smaller model may exist)")
	}
	b.WriteString("\n")
	return b.String()
}

func codeList(names []string) string {
	q := slices.Clone(names)
	for i, n := range q {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}
