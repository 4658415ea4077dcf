// Malformed command lines: exit 2 with one line "query: usage: ...".

package main_test

import (
	"net"
	"path/filepath"
	"strings"

	"github.com/fb46ecde/records/cmd/query/internal/cli"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("usage errors", func() {
	DescribeTable("exit 2 with a usage line and no output",
		func(says string, args ...string) {
			s := newStore()
			r := s.run("", args...)
			Expect(r.code).To(Equal(cli.ExitUsage), "stderr %q", r.stderr)
			Expect(r.stdout).To(BeEmpty())
			Expect(r.stderr).To(HavePrefix("query: usage: "))
			Expect(strings.Count(r.stderr, "\n")).To(Equal(1), "one line on stderr: %q", r.stderr)
			Expect(r.stderr).To(ContainSubstring(says))
		},
		Entry("no command", "needs a subcommand"),
		Entry("help on an unknown command", `unknown help topic "frobnicate"`, "help", "frobnicate"),
		Entry("help on an unknown verb", `unknown help topic "spool nope"`, "help", "spool", "nope"),
		Entry("an unknown command", `unknown command "frobnicate"`, "frobnicate"),
		Entry("a group without its verb", "query kind needs a subcommand", "kind"),
		Entry("an unknown verb", `unknown command "drop"`, "kind", "drop"),
		Entry("an unknown flag", "unknown flag: --colour", "scan", "--stream", "s1", "--colour"),
		Entry("a missing required flag", `required flag(s) "stream" not set`, "meta"),
		Entry("both required flags missing", `required flag(s) "kind", "stream" not set`, "append"),
		Entry("a flag without its value", "flag needs an argument: --stream", "scan", "--stream"),
		Entry("too many arguments", "accepts 1 arg(s), received 2", "kind", "apply", "a.json", "b.json"),
		Entry("a missing argument", "accepts 1 arg(s), received 0", "kind", "apply"),
		Entry("a stray argument", `unknown command "extra"`, "meta", "--stream", "s1", "extra"),
		Entry("an unsupported format", `invalid argument "csv" for "--format"`, "append", "--stream", "s1", "--kind", "jobs", "--format", "csv"),
		Entry("a ttl that is not a duration", `invalid argument "5" for "--ttl"`, "expire", "--stream", "s1", "--ttl", "5"),
		Entry("a time that is not RFC 3339", `invalid argument "yesterday" for "--before"`, "trim", "--stream", "s1", "--before", "yesterday"),
		Entry("a seq that is not a number", `invalid argument "x" for "--after"`, "scan", "--stream", "s1", "--after", "x"),
		Entry("a negative seq", "--after must not be negative", "scan", "--stream", "s1", "--after", "-1"),
		Entry("a negative limit", "--limit must not be negative", "scan", "--stream", "s1", "--limit", "-5"),
		Entry("a generation below 1", "--generation must be at least 1", "reopen", "--stream", "s1", "--generation", "0"),
		Entry("reopen without a generation", `required flag(s) "generation" not set`, "reopen", "--stream", "s1"),
		Entry("spool without its verb", "query spool needs a subcommand", "spool"),
		Entry("spool publish without its flags", `required flag(s) "kind", "stream" not set`, "spool", "publish"),
		Entry("spool publish in an unknown format", `invalid argument "csv" for "--format"`, "spool", "publish", "--stream", "s1", "--kind", "jobs", "--format", "csv"),
		Entry("spool publish with schema and rows both on stdin", "--schema - needs the rows in a FILE", "spool", "publish", "--stream", "s1", "--kind", "jobs", "--schema", "-"),
		Entry("spool inspect without a batch", "accepts 1 arg(s), received 0", "spool", "inspect"),
		Entry("spool retry with two batches", "accepts 1 arg(s), received 2", "spool", "retry", "a", "b"),
		Entry("a negative --batch-rows", "--batch-rows must not be negative", "append", "--stream", "s1", "--kind", "jobs", "--batch-rows", "-1"),
		Entry("--batch-rows with --no-wait", "--batch-rows and --no-wait cannot be used together", "append", "--stream", "s1", "--kind", "jobs", "--batch-rows", "10", "--no-wait"),
		Entry("spool gc with an age that is not a duration", `invalid argument "5" for "--tmp-age"`, "spool", "gc", "--tmp-age", "5"),
		Entry("spool ls with an argument", `unknown command "x"`, "spool", "ls", "x"),
		Entry("an empty store path for spool", "--store must not be empty", "--store", "", "spool", "ls"),
		Entry("an empty store path", "--store must not be empty", "--store", "", "streams"),
		Entry("a negative append timeout", "--timeout must not be negative", "append", "--stream", "s1", "--kind", "jobs", "--timeout=-1s"),
		Entry("an append timeout that is not a duration", `invalid argument "5" for "--timeout"`, "append", "--stream", "s1", "--kind", "jobs", "--timeout", "5"),
		Entry("append with schema and rows both on stdin", "--schema - needs the rows in a FILE", "append", "--stream", "s1", "--kind", "jobs", "--schema", "-"),
		Entry("append with both --no-wait and --timeout", "--timeout and --no-wait cannot be used together", "append", "--stream", "s1", "--kind", "jobs", "--no-wait", "--timeout", "1s"),
		Entry("status with an argument", `unknown command "x"`, "status", "x"),
		Entry("an empty store path for status", "--store must not be empty", "--store", "", "status"),
		Entry("serve on an address without a port", `--addr "bogus": want HOST:PORT`, "serve", "--addr", "bogus"),
		Entry("serve on a port that is no number", `--addr "127.0.0.1:seventy"`, "serve", "--addr", "127.0.0.1:seventy"),
		Entry("fleet --restore-missing without --replica", "--restore-missing needs --replica and --lease s3", "fleet", "stats", "--root", "/nonexistent", "--restore-missing"),
		Entry("fleet --restore-missing without --lease", "--restore-missing needs --replica and --lease s3", "--replica", "file:///nonexistent/replica", "fleet", "stats", "--root", "/nonexistent", "--restore-missing"),
		Entry("fleet --lease s3 without an s3:// --replica", "--lease s3 needs an s3:// --replica", "--replica", "file:///nonexistent/replica", "--lease", "s3", "fleet", "stats", "--root", "/nonexistent"),
		Entry("an unknown log level", `invalid argument "loud" for "--log-level"`, "--log-level", "loud", "streams"),
	)

	It("prints help on stdout and exits 0 for --help", func() {
		s := newStore()
		r := s.run("", "scan", "--help")
		Expect(r.code).To(Equal(cli.ExitOK))
		Expect(r.stdout).To(ContainSubstring("--follow"))
		Expect(r.stderr).To(BeEmpty())
	})

	It("fails serve on an address in use before it opens the store", func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		s := newStore()
		r := s.run("", "serve", "--addr", ln.Addr().String())
		Expect(r.code).To(Equal(cli.ExitFailure), r.stderr)
		Expect(r.stderr).To(HavePrefix("query: internal: listen on " + ln.Addr().String()))
		Expect(s.path+".lock").NotTo(BeAnExistingFile(), "the store was not opened")
		Expect(filepath.Join(filepath.Dir(s.path), "v1")).NotTo(BeAnExistingFile())
	})

	It("prints the same help for help COMMAND", func() {
		s := newStore()
		flag := s.run("", "spool", "ls", "--help")
		verb := s.run("", "help", "spool", "ls")
		Expect(verb.code).To(Equal(cli.ExitOK), verb.stderr)
		Expect(verb.stdout).To(ContainSubstring("--failed"))
		Expect(verb.stdout).To(Equal(flag.stdout))
		Expect(verb.stderr).To(BeEmpty())
	})
})
