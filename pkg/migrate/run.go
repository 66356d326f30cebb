package migrate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Exit codes of `serval migrate`.
const (
	ExitOK = 0
	// ExitError: unreadable or malformed input, or findings under --strict.
	ExitError = 1
	// ExitFindings: the output was written, but something could not be
	// carried over (see stderr).
	ExitFindings = 2
)

// RunOptions are the command's flags.
type RunOptions struct {
	Options
	// Files are -f arguments: files, directories (their YAML and JSON files)
	// or "-" for standard input.
	Files []string
	// OutDir, when set, receives one output file per input file.
	OutDir string
	// Strict makes any blocking finding an error and writes no output.
	Strict bool
}

type input struct {
	name string
	data []byte
}

// Run migrates the inputs, writes the output to stdout (or OutDir) and the
// findings to stderr, and returns the exit code.
func Run(o RunOptions, stdin io.Reader, stdout, stderr io.Writer) int {
	inputs, err := readInputs(o.Files, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return ExitError
	}
	type result struct {
		name string
		data []byte
	}
	var results []result
	blocking := 0
	for _, in := range inputs {
		// A container applied from another input serves this one's URIs.
		o.StorageContainers = append(o.StorageContainers, containersIn(splitDocuments(in.data))...)
	}
	for _, in := range inputs {
		out, findings, err := File(in.name, in.data, o.Options)
		if err != nil {
			// One malformed file does not stop the others: it is reported,
			// not written, and the run ends with findings.
			fmt.Fprintf(stderr, "%s: cannot carry over: the file does not parse, so it is not written: %v\n", in.name, err)
			blocking++
			continue
		}
		for _, f := range findings {
			fmt.Fprintln(stderr, f)
			if f.Blocking {
				blocking++
			}
		}
		results = append(results, result{in.name, out})
	}
	if blocking > 0 && o.Strict {
		fmt.Fprintf(stderr, "error: %d finding(s) cannot be carried over; nothing written (--strict)\n", blocking)
		return ExitError
	}
	for i, r := range results {
		if err := write(o.OutDir, r.name, r.data, i > 0, stdout); err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return ExitError
		}
	}
	if blocking > 0 {
		fmt.Fprintf(stderr, "%d finding(s) cannot be carried over; see above\n", blocking)
		return ExitFindings
	}
	return ExitOK
}

func write(outDir, name string, data []byte, separate bool, stdout io.Writer) error {
	if outDir == "" {
		if separate {
			if _, err := io.WriteString(stdout, "---\n"); err != nil {
				return err
			}
		}
		_, err := stdout.Write(data)
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	base := filepath.Base(name)
	if name == "-" {
		base = "stdin.yaml"
	}
	return os.WriteFile(filepath.Join(outDir, base), data, 0o644)
}

func readInputs(files []string, stdin io.Reader) ([]input, error) {
	if len(files) == 0 {
		return nil, errors.New("no input: give -f FILE, -f DIR or -f -")
	}
	var inputs []input
	for _, f := range files {
		if f == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("read standard input: %w", err)
			}
			inputs = append(inputs, input{"-", data})
			continue
		}
		paths, err := expand(f)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, input{p, data})
		}
	}
	return inputs, nil
}

// expand returns a file itself, or a directory's YAML and JSON files, sorted.
func expand(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}
