// The multi-process harness driving real child processes of this test
// binary (whose store is the reference model): lines, codes, failpoint
// actions, hold and release, large scripts, and a parent that goes away.

package recordstoretest

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// wait is the generous bound of every wait for a child's line: it bounds
// liveness, it is not a speed goal.
const wait = 30 * time.Second

func noteKind() *recordstore.Kind {
	return &recordstore.Kind{Name: "note", Columns: []recordstore.Column{
		{Name: "k", Type: recordstore.TypeString},
		{Name: "n", Type: recordstore.TypeInteger},
		{Name: "msg", Type: recordstore.TypeString},
	}}
}

func hit(name string) Step {
	return Step{Op: OpHit, Failpoint: &FailpointRule{Name: name}}
}

var _ = Describe("the multi-process harness", Label("integration"), func() {
	It("runs a script and prints one line per step, with results, events and a clean exit", func() {
		c := MustStartChild(Script{Path: "unused", Steps: []Step{
			{Op: OpOpen, Name: "open"},
			{Op: OpDeclare, Name: "declare", Schema: noteKind()},
			{Op: OpAppend, Name: "append-rows", Stream: "s", Kind: "note", Rows: []recordstore.Row{{"k": "a", "n": 1}, {"k": "b", "n": 9007199254740993}}},
			{Op: OpAppend, Name: "append-gen", Stream: "s", Kind: "note", Gen: &Gen{Prefix: "g", From: 7, Count: 3, Extra: map[string]any{"msg": "hi"}}},
			{Op: OpScan, Name: "scan", Stream: "s", After: 1},
			{Op: OpMeta, Name: "meta", Stream: "s"},
			{Op: OpStatus, Name: "status"},
			{Op: OpClose, Name: "close"},
		}})
		start, err := c.Next(wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(start.Op).To(Equal(EventStart))
		var pid map[string]int
		Expect(start.Decode(&pid)).To(Succeed())
		Expect(pid["pid"]).To(Equal(c.Pid()))

		role := c.MustEvent(EventRole, wait)
		Expect(role.Role).To(Equal("owner"))
		Expect(role.Step).To(Equal(0))
		open := c.MustStepNamed("open", wait)
		Expect(open.Role).To(Equal("owner"))
		Expect(open.Name).To(Equal("open"))
		Expect(string(c.MustStepNamed("declare", wait).Result)).To(Equal(`"created"`))

		var first, second recordstore.AppendResult
		Expect(c.MustStepNamed("append-rows", wait).Decode(&first)).To(Succeed())
		Expect(c.MustStepNamed("append-gen", wait).Decode(&second)).To(Succeed())
		Expect([]int64{first.From, first.To, second.From, second.To}).To(Equal([]int64{1, 2, 3, 5}))

		recs, err := c.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(4))
		Expect(recs[0]).To(Equal(map[string]any{"_seq": json.Number("2"), "k": "b", "n": json.Number("9007199254740993"), "msg": nil}))
		Expect(recs[1]).To(Equal(map[string]any{"_seq": json.Number("3"), "k": GenKey("g", 7), "n": json.Number("7"), "msg": "hi"}))
		Expect(recs[3]["k"]).To(Equal("g-00000009"))

		var meta recordstore.Meta
		Expect(c.MustStepNamed("meta", wait).Decode(&meta)).To(Succeed())
		Expect([]int64{meta.Total, meta.LowSeq, meta.HighSeq}).To(Equal([]int64{5, 1, 5}))
		var status map[string]int
		Expect(c.MustStepNamed("status", wait).Decode(&status)).To(Succeed())
		Expect(status["pid"]).To(Equal(c.Pid()))
		Expect(c.MustStepNamed("close", wait).Role).To(Equal("closed"))
		c.MustFinish(wait)
		Expect(c.Killed()).To(BeFalse())
	})

	It("reports a failed step with its code and runs on", func() {
		c := MustStartChild(Script{Path: "unused", Steps: []Step{
			{Op: OpMeta, Stream: "s"},
			{Op: OpOpen},
			{Op: OpAppend, Stream: "s", Kind: "missing", Rows: []recordstore.Row{{"k": "a"}}},
			{Op: OpMeta, Stream: "s"},
			{Op: OpPublish, Stream: "s", Kind: "note", Schema: noteKind(), Rows: []recordstore.Row{{"k": "a"}}},
			{Op: OpPublish, Stream: "s", Kind: "note", Schema: noteKind(), Rows: []recordstore.Row{{"k": 5}}},
			{Op: "dance"},
			{Op: OpWaitRole, Role: "non-owner", Timeout: 50 * time.Millisecond},
		}})
		codes := []string{"invalid", "", "not_found", "not_found", "unsupported", "invalid", "invalid", "timeout"}
		for i, code := range codes {
			l, err := c.Step(i, wait)
			Expect(err).NotTo(HaveOccurred())
			Expect(l.OK).To(Equal(code == ""), "step %d: %s", i, l)
			Expect(l.Code).To(Equal(code), "step %d: %s", i, l)
			if code != "" {
				Expect(l.Error).NotTo(BeEmpty())
			}
		}
		c.MustFinish(wait)
	})

	Describe("named steps", func() {
		It("reads a step's line by its name, which the line carries, and by its index for compatibility", func() {
			c := MustStartChild(Script{Path: "unused", Steps: []Step{
				{Op: OpOpen, Name: "open"},
				{Op: OpStatus},
				{Op: OpMeta, Name: "meta-missing", Stream: "missing"},
			}})
			byName, err := c.StepNamed("meta-missing", wait)
			Expect(err).NotTo(HaveOccurred())
			Expect(byName.Name).To(Equal("meta-missing"))
			Expect(byName.Step).To(Equal(2))
			Expect(byName.Code).To(Equal("not_found"))
			byIndex, err := c.Step(2, wait)
			Expect(err).NotTo(HaveOccurred())
			Expect(byIndex).To(Equal(byName))
			Expect(c.MustStep(1, wait).Name).To(BeEmpty(), "an unnamed step's line has no name")
			Expect(c.MustStepNamed("open", wait).Role).To(Equal("owner"))
			c.MustFinish(wait)
		})

		It("fails at once to read a name the script does not give", func() {
			c := MustStartChild(Script{Path: "unused", Steps: []Step{{Op: OpOpen, Name: "open"}, {Op: OpHold}}})
			_, err := c.StepNamed("opne", time.Hour)
			Expect(err).To(MatchError(ContainSubstring(`the script has no step named "opne"`)))
			_, err = c.StepNamed("", time.Hour)
			Expect(err).To(MatchError(ContainSubstring(`no step named ""`)))
		})

		DescribeTable("refuses a script whose names cannot be told apart, starting no child",
			func(steps []Step, msg string) {
				c, err := StartChild(Script{Path: "unused", Steps: steps})
				Expect(err).To(MatchError(recordstore.ErrInvalid))
				Expect(recordstore.Code(err)).To(Equal("invalid"))
				Expect(err.Error()).To(ContainSubstring(msg))
				Expect(c).To(BeNil())
			},
			Entry("two steps with one name",
				[]Step{{Op: OpOpen, Name: "open"}, {Op: OpStatus, Name: "status"}, {Op: OpOpen, Name: "open"}},
				`steps 0 and 2 are both named "open"`),
			Entry("an await referring to a name no step has",
				[]Step{{Op: OpOpen}, {Op: OpPublish, Name: "publish"}, {Op: OpAwait, RefName: "pubilsh"}},
				`step 2 refers to step "pubilsh", which the script does not name`),
			Entry("an await with both Ref and RefName",
				[]Step{{Op: OpPublish, Name: "publish"}, {Op: OpAwait, Ref: Ref(0), RefName: "publish"}},
				"step 1 sets both Ref and RefName"),
		)
	})

	It("stops at the first failed step with StopOnError, exit status 1", func() {
		c := MustStartChild(Script{Path: "unused", StopOnError: true, Steps: []Step{
			{Op: OpOpen, Name: "open"},
			{Op: OpMeta, Name: "meta-missing", Stream: "missing"},
			{Op: OpStatus, Name: "status"},
		}})
		c.MustStepNamed("open", wait)
		l, err := c.StepNamed("meta-missing", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Code).To(Equal("not_found"))
		_, err = c.Wait(wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.ExitCode()).To(Equal(1))
		for _, l := range c.Lines() {
			Expect(l.Step).To(BeNumerically("<", 2), "a line after the failed step: %s", l)
			Expect(l.Op).NotTo(Equal(EventDone))
		}
	})

	Describe("failpoints", func() {
		It("SIGKILLs the child at the armed hit, counting hits from when the rule was armed", func() {
			c := MustStartChild(Script{Path: "unused",
				Failpoints: []FailpointRule{{Name: "model-open", Action: ActReport}},
				Steps: []Step{
					{Op: OpOpen},
					hit("x"),
					hit("x"),
					{Op: OpArm, Failpoint: &FailpointRule{Name: "x", Action: ActKill, Hit: 2}},
					hit("x").Named("first-armed-hit"),
					hit("x").Named("killing-hit"),
					{Op: OpStatus},
				}})
			fp := c.MustEvent(EventFailpoint, wait)
			Expect(fp.Name).To(Equal("model-open"))
			Expect(fp.Step).To(Equal(0))
			c.MustStepNamed("first-armed-hit", wait)
			fp = c.MustEvent(EventFailpoint, wait)
			Expect(fp.Name).To(Equal("x"))
			Expect(fp.Step).To(Equal(5))
			var body map[string]any
			Expect(fp.Decode(&body)).To(Succeed())
			Expect(body).To(Equal(map[string]any{"name": "x", "hit": json.Number("4"), "action": "kill"}))
			_, err := c.Wait(wait)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Killed()).To(BeTrue(), "exit state %d", c.ExitCode())
			for _, l := range c.Lines() {
				Expect(l.Step).To(BeNumerically("<=", 5), "a line after the kill: %s", l)
				Expect(l.Op).NotTo(Equal(EventDone))
			}
		})

		It("exits with status 3 at an exit failpoint", func() {
			c := MustStartChild(Script{Path: "unused",
				Failpoints: []FailpointRule{{Name: "model-open", Action: ActExit}},
				Steps:      []Step{{Op: OpOpen}, {Op: OpStatus}}})
			c.MustEvent(EventFailpoint, wait)
			_, err := c.Wait(wait)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.ExitCode()).To(Equal(3))
			Expect(c.Killed()).To(BeFalse())
		})

		It("stops the child at a pause failpoint until it is continued", func() {
			if runtime.GOOS != "linux" {
				Skip("reads the process state from /proc")
			}
			c := MustStartChild(Script{Path: "unused", Steps: []Step{
				{Op: OpHit, Name: "pause", Failpoint: &FailpointRule{Name: "p", Action: ActPause}},
				{Op: OpSleep, Name: "sleep", Duration: time.Millisecond},
			}})
			c.MustEvent(EventFailpoint, wait)
			Eventually(func() string { return procState(c.Pid()) }, wait, 10*time.Millisecond).Should(Equal("T"))
			Expect(c.Lines()).NotTo(ContainElement(HaveField("Op", OpHit)))
			Expect(c.Cont()).To(Succeed())
			c.MustStepNamed("pause", wait)
			c.MustStepNamed("sleep", wait)
			c.MustFinish(wait)
		})

		It("blocks the goroutine at a block failpoint until released", func() {
			c := MustStartChild(Script{Path: "unused", Steps: []Step{
				{Op: OpHit, Name: "block", Failpoint: &FailpointRule{Name: "b", Action: ActBlock}},
				{Op: OpSleep, Name: "sleep", Duration: time.Millisecond},
			}})
			c.MustEvent(EventFailpoint, wait)
			_, err := c.StepNamed("block", 300*time.Millisecond)
			Expect(err).To(HaveOccurred(), "the step ran on through a block failpoint")
			Expect(c.Release()).To(Succeed())
			c.MustStepNamed("sleep", wait)
			c.MustFinish(wait)
		})

		It("refuses an unknown action", func() {
			c := MustStartChild(Script{Path: "unused", Steps: []Step{
				{Op: OpArm, Failpoint: &FailpointRule{Name: "x", Action: "explode"}},
				{Op: OpHit, Failpoint: &FailpointRule{Name: "x", Action: "explode"}},
				{Op: OpArm},
			}})
			for i := range 3 {
				l, err := c.Step(i, wait)
				Expect(err).NotTo(HaveOccurred())
				Expect(l.Code).To(Equal("invalid"), "%s", l)
			}
			c.MustFinish(wait)
		})
	})

	It("holds until released, and a hold with a timeout times out", func() {
		c := MustStartChild(Script{Path: "unused", Steps: []Step{
			{Op: OpHold, Name: "hold"},
			{Op: OpHold, Name: "hold-with-timeout", Timeout: 20 * time.Millisecond},
		}})
		_, err := c.StepNamed("hold", 300*time.Millisecond)
		Expect(err).To(HaveOccurred(), "hold returned without a release")
		Expect(c.Release()).To(Succeed())
		c.MustStepNamed("hold", wait)
		l, err := c.StepNamed("hold-with-timeout", wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Code).To(Equal("timeout"))
		c.MustFinish(wait)
	})

	It("passes a large script through a file and removes the file", func() {
		big := strings.Repeat("x", 3*maxEnvScript)
		c := MustStartChild(Script{Path: "unused", Steps: []Step{
			{Op: OpOpen},
			{Op: OpDeclare, Schema: noteKind()},
			{Op: OpAppend, Stream: "s", Kind: "note", Rows: []recordstore.Row{{"k": "big", "msg": big}}},
			{Op: OpScan, Name: "scan", Stream: "s"},
		}})
		Expect(c.file).NotTo(BeEmpty())
		recs, err := c.MustStepNamed("scan", wait).Records()
		Expect(err).NotTo(HaveOccurred())
		Expect(recs).To(HaveLen(1))
		Expect(recs[0]["msg"]).To(Equal(big))
		Expect(c.file).NotTo(BeAnExistingFile())
		c.MustFinish(wait)
	})

	It("kills itself when its parent goes away (its stdin closes)", func() {
		c := MustStartChild(Script{Path: "unused", Steps: []Step{{Op: OpOpen, Name: "open"}, {Op: OpHold}}})
		c.MustStepNamed("open", wait)
		Expect(c.stdin.Close()).To(Succeed())
		_, err := c.Wait(wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Killed()).To(BeTrue())
		Expect(c.Stderr()).To(ContainSubstring("the parent is gone"))
	})

	It("reports the exit status of an exit step, and a child killed from outside", func() {
		c := MustStartChild(Script{Path: "unused", Steps: []Step{{Op: OpExit, Code: 7}}})
		_, err := c.Wait(wait)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.ExitCode()).To(Equal(7))
		_, err = c.Next(wait)
		Expect(err).NotTo(HaveOccurred()) // the start line
		_, err = c.Next(wait)
		Expect(err).To(MatchError(ContainSubstring("the child exited")))

		k := MustStartChild(Script{Path: "unused", Steps: []Step{{Op: OpHold}}})
		k.MustEvent(EventStart, wait)
		Expect(k.Kill()).To(Succeed())
		Expect(k.Killed()).To(BeTrue())
		Expect(k.Stop()).To(MatchError(os.ErrProcessDone))
	})
})

// procState returns the state letter of /proc/<pid>/stat ("R", "S", "T").
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return "?"
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return "?"
	}
	return s[i+2 : i+3]
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
