// query kind apply and append with a bound kind: the kind file's "table"
// binds the kind to a table made from the file's DDL.

package main_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("a bound kind from the CLI", func() {
	It("is applied from a kind file, appended to with seq = id, and refused when the DDL does more", func() {
		s := newStore()
		kinds := `{"kinds":[{"name":"cfg","columns":[{"name":"id","type":"integer"},{"name":"name","type":"string"}],
			"key":["id"],"onConflict":"replace",
			"table":{"name":"config","ddl":["CREATE TABLE IF NOT EXISTS config (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL)"]}},
			{"name":"log","columns":[{"name":"msg","type":"string"}],
			"table":{"name":"log_rows","ddl":["CREATE TABLE log_rows (id INTEGER PRIMARY KEY AUTOINCREMENT, msg TEXT)"]}}]}`
		Expect(s.ok(kinds, "kind", "apply", "-")).To(Equal(
			`{"name":"cfg","status":"created"}` + "\n" + `{"name":"log","status":"created"}` + "\n"))
		s.ok(`{"id":1,"name":"a"}`, "append", "--stream", "w", "--kind", "cfg")
		res := s.one(`{"id":1,"name":"b"}`, "append", "--stream", "w", "--kind", "cfg")
		Expect(res["replaced"]).To(Equal(num("1")))
		Expect(s.ok("", "scan", "--stream", "w")).To(Equal(`{"_seq":1,"id":1,"name":"b"}` + "\n"))
		s.ok(`{"msg":"x"}`+"\n"+`{"msg":"y"}`, "append", "--stream", "l", "--kind", "log")
		Expect(s.ok("", "scan", "--stream", "l")).To(Equal(`{"_seq":1,"msg":"x"}` + "\n" + `{"_seq":2,"msg":"y"}` + "\n"))

		bad := `{"kinds":[{"name":"evil","columns":[{"name":"a","type":"string"}],
			"table":{"name":"evil","ddl":["CREATE TABLE evil (a TEXT); DROP TABLE config"]}}]}`
		r := s.run(bad, "kind", "apply", "-")
		Expect(r.code).NotTo(BeZero())
		Expect(r.stderr).To(ContainSubstring("more than one statement"))
		Expect(s.ok("", "scan", "--stream", "w")).To(Equal(`{"_seq":1,"id":1,"name":"b"}` + "\n"))
	})
})
