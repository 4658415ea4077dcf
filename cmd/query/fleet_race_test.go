// query fleet append racing query fleet delete --force, both the real
// binary, round after round on one root (issue 28): the delete is atomic
// with respect to the append, which lands before it or fails with
// not_found, and never brings the store (or any of its files) back.
//
// The loop runs for RECORDS_FLEET_RACE (default 30s; make soak runs it
// longer).

package main_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query fleet append racing query fleet delete --force", Label("fleetrace"), func() {
	It("never brings a deleted store back, round after round on one root", func() {
		length := 30 * time.Second
		if s := os.Getenv("RECORDS_FLEET_RACE"); s != "" {
			d, err := time.ParseDuration(s)
			Expect(err).NotTo(HaveOccurred(), "RECORDS_FLEET_RACE")
			length = d
		}
		dir := GinkgoT().TempDir()
		root := filepath.Join(dir, "fleet")
		Expect(os.Mkdir(root, 0o700)).To(Succeed())
		fleetArgs := func(verb string, more ...string) []string {
			return append([]string{"fleet", verb, "--root", root, "--kinds", kindsFile()}, more...)
		}
		storeFiles := func() []string {
			m, err := filepath.Glob(filepath.Join(root, "*", "r1.db*"))
			Expect(err).NotTo(HaveOccurred())
			return m
		}
		rounds, deleted, landed := 0, 0, 0
		for end := time.Now().Add(length); time.Now().Before(end); rounds++ {
			p := runQuery(dir, nil, "", fleetArgs("provision", "tenant:r1")...)
			Expect(p.code).To(Equal(0), "round %d: provision: %s", rounds, p.stderr)

			app := exec.Command(queryBin, fleetArgs("append", "tenant:r1", "--stream", "e1", "--kind", "events")...)
			app.Dir = dir
			app.Env = withoutStoreEnv()
			app.Stdin = strings.NewReader(`{"msg":"x"}` + "\n")
			var aout, aerr bytes.Buffer
			app.Stdout, app.Stderr = &aout, &aerr
			Expect(app.Start()).To(Succeed())
			time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond) // the race's spread, not a wait for anything

			d := runQuery(dir, nil, "", "fleet", "delete", "tenant:r1", "--force", "--root", root)
			werr := app.Wait()
			acode := 0
			if werr != nil {
				exit, ok := werr.(*exec.ExitError)
				Expect(ok).To(BeTrue(), "round %d: append: %v", rounds, werr)
				acode = exit.ExitCode()
			}
			what := func() string {
				return fmt.Sprintf("round %d: delete exit %d %s%s; append exit %d %s%s",
					rounds, d.code, d.stdout, d.stderr, acode, aout.String(), aerr.String())
			}
			if acode == 0 {
				landed++
			} else {
				Expect(acode).To(Equal(1), what())
				// The owner's warning may come first: the error is the last line.
				lines := strings.Split(strings.TrimSuffix(aerr.String(), "\n"), "\n")
				Expect(lines[len(lines)-1]).To(HavePrefix("query: not_found: "), what())
			}
			if d.code == 0 {
				deleted++
				Expect(storeFiles()).To(BeEmpty(), "the deleted store came back: %s", what())
				continue
			}
			// The append owned the store when the delete came: refused,
			// nothing removed. Delete it now that the append is done.
			Expect(d.stderr).To(HavePrefix("query: in_use: "), what())
			again := runQuery(dir, nil, "", "fleet", "delete", "tenant:r1", "--force", "--root", root)
			Expect(again.code).To(Equal(0), "%s; delete again: %s", what(), again.stderr)
			Expect(storeFiles()).To(BeEmpty(), what())
		}
		GinkgoWriter.Printf("%d rounds: %d deletes won the race or followed the append, %d appends landed\n", rounds, deleted, landed)
		Expect(rounds).To(BeNumerically(">", 0))
	})
})
