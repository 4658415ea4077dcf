// Helpers that run the real query binary against a store in a temp folder.

package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// result is what one run of the binary did.
type result struct {
	code   int
	stdout string
	stderr string
}

// store is a store path in a fresh temp folder, and the runs against it.
type store struct {
	dir  string
	path string
}

func newStore() *store {
	dir := GinkgoT().TempDir()
	return &store{dir: dir, path: filepath.Join(dir, "records.sqlite")}
}

// run runs query --store s.path args... with stdin as standard input.
func (s *store) run(stdin string, args ...string) result {
	return runQuery(s.dir, nil, stdin, append([]string{"--store", s.path}, args...)...)
}

// ok runs a command that must succeed and returns its stdout.
func (s *store) ok(stdin string, args ...string) string {
	r := s.run(stdin, args...)
	ExpectWithOffset(1, r.code).To(Equal(0), "query %v: %s", args, r.stderr)
	ExpectWithOffset(1, r.stderr).To(BeEmpty())
	return r.stdout
}

// lines runs a command that must succeed and decodes each stdout line.
func (s *store) lines(stdin string, args ...string) []map[string]any {
	return decodeLines(s.ok(stdin, args...))
}

// one runs a command that must succeed with one JSON object as output.
func (s *store) one(stdin string, args ...string) map[string]any {
	out := decodeLines(s.ok(stdin, args...))
	ExpectWithOffset(1, out).To(HaveLen(1))
	return out[0]
}

// runQuery runs the binary in dir with extra environment entries.
func runQuery(dir string, env []string, stdin string, args ...string) result {
	cmd := exec.Command(queryBin, args...)
	cmd.Dir = dir
	cmd.Env = append(withoutStoreEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		ExpectWithOffset(2, err).NotTo(HaveOccurred())
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// withoutStoreEnv is the test's environment minus RECORDS_STORE, so that
// a developer's own setting does not leak into the runs.
func withoutStoreEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RECORDS_STORE=") {
			env = append(env, kv)
		}
	}
	return env
}

// decodeLines decodes one JSON object per line, numbers as json.Number.
func decodeLines(out string) []map[string]any {
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var obj map[string]any
		ExpectWithOffset(2, dec.Decode(&obj)).To(Succeed(), "line %q", line)
		objs = append(objs, obj)
	}
	return objs
}

// keys returns the keys of obj.
func keys(obj map[string]any) []string {
	var ks []string
	for k := range obj {
		ks = append(ks, k)
	}
	return ks
}

// kindsFile is the fixture declaring the kinds "jobs" and "events".
func kindsFile() string {
	p, err := filepath.Abs(filepath.Join("testdata", "kinds.json"))
	Expect(err).NotTo(HaveOccurred())
	return p
}

// writeFile writes content to a new file in dir and returns its path.
func writeFile(dir, name, content string) string {
	p := filepath.Join(dir, name)
	Expect(os.WriteFile(p, []byte(content), 0o600)).To(Succeed())
	return p
}

// num is shorthand for a json.Number in expectations.
func num(s string) json.Number { return json.Number(s) }

// msgLines returns n NDJSON rows of the events kind, {"msg":"prefix-i"}
// for i from first on.
func msgLines(prefix string, first, n int) string {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, `{"msg":"%s-%d"}`+"\n", prefix, i)
	}
	return b.String()
}
