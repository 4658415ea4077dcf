// Specs of Config: every key's default, a good value, its bad values, and
// the mode helpers.

package recorder_test

import (
	"errors"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/recordstore"
)

// valid is a default config that passes Validate.
func valid() recorder.Config {
	c := recorder.DefaultConfig()
	c.WorkerName = "w1"
	return c
}

var _ = Describe("Config", func() {
	DescribeTable("each key has its default, takes a good value and refuses bad ones",
		func(key, def, good string, read func(recorder.Config) any, want any, bad []string) {
			got, ok := recorder.DefaultConfig().Get(key)
			Expect(ok).To(BeTrue())
			Expect(got).To(Equal(def))

			c := valid()
			Expect(c.Set(key, good)).To(Succeed())
			Expect(c.Validate()).To(Succeed())
			Expect(read(c)).To(Equal(want))

			for _, v := range bad {
				c := valid()
				err := c.Set(key, v)
				if err == nil {
					err = c.Validate()
				}
				Expect(err).To(MatchError(recorder.ErrConfig), "value %q", v)
				Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
				Expect(err.Error()).To(ContainSubstring(key+": "), "value %q", v)
			}
		},
		Entry(nil, "storage.dir", "", "/data/w", func(c recorder.Config) any { return c.StorageDir }, "/data/w", []string{"a\x00b"}),
		Entry(nil, "shared.dir", "", "/mnt/fleet", func(c recorder.Config) any { return c.SharedDir }, "/mnt/fleet", []string{"\x00"}),
		Entry(nil, "worker.name", "", "search-7", func(c recorder.Config) any { return c.WorkerName }, "search-7",
			[]string{"", "a/b", `a\b`, "a\x00b", ".hidden", "tab\there", strings.Repeat("w", 201), "\xff"}),
		Entry(nil, "cluster.name", "", "search hot/β", func(c recorder.Config) any { return c.ClusterName }, "search hot/β", nil),
		Entry(nil, "ui.enabled", "true", "false", func(c recorder.Config) any { return c.UIEnabled }, false, []string{"yes", "1", "", "True"}),
		Entry(nil, "ui.recorder.store_events", "true", "false", func(c recorder.Config) any { return c.StoreEvents }, false, []string{"no"}),
		Entry(nil, "ui.recorder.store_config", "true", "false", func(c recorder.Config) any { return c.StoreConfig }, false, []string{"0"}),
		Entry(nil, "ui.recorder.store_state", "true", "false", func(c recorder.Config) any { return c.StoreState }, false, []string{"off"}),
		Entry(nil, "ui.recorder.state_sync_interval_seconds", "10", "2.5", func(c recorder.Config) any { return c.StateSyncInterval }, 2500*time.Millisecond,
			[]string{"0", "-1", "x", "NaN", "Inf", "1e300"}),
		Entry(nil, "ui.recorder.rotation_interval_hours", "1", "0.001", func(c recorder.Config) any { return c.RotationInterval }, 3600*time.Millisecond,
			[]string{"0", "-0.5", "1h", ""}),
		Entry(nil, "ui.recorder.flush_interval_seconds", "1", "0.25", func(c recorder.Config) any { return c.FlushInterval }, 250*time.Millisecond,
			[]string{"0", "-1", "one"}),
		Entry(nil, "ui.recorder.max_buffer", "50000", "1000", func(c recorder.Config) any { return c.MaxBuffer }, 1000,
			[]string{"10", "999", "-1", "1.5", "lots"}),
		Entry(nil, "ui.recorder.max_flush_retries", "3", "0", func(c recorder.Config) any { return c.MaxFlushRetries }, 0,
			[]string{"-1", "2.5", "x"}),
		Entry(nil, "ui.recorder.output_min_duration_ms", "500", "0", func(c recorder.Config) any { return c.OutputMinDuration }, time.Duration(0),
			[]string{"-1", "ms"}),
		Entry(nil, "ui.recorder.event_min_duration_ms", "0", "12.5", func(c recorder.Config) any { return c.EventMinDuration }, 12500*time.Microsecond,
			[]string{"-0.1", "fast"}),
		Entry(nil, "ui.recorder.store_output", "true", "false", func(c recorder.Config) any { return c.StoreOutput }, false, []string{"FALSE"}),
		Entry(nil, "ui.recorder.store_stdin", "false", "true", func(c recorder.Config) any { return c.StoreStdin }, true, []string{"on"}),
		Entry(nil, "ui.recorder.stdin_max_bytes", "65536", "0", func(c recorder.Config) any { return c.StdinMaxBytes }, 0,
			[]string{"-1", "64k"}),
	)

	It("lists exactly the keys the table above covers", func() {
		Expect(recorder.Keys()).To(HaveLen(18))
	})

	It("refuses an unknown key by name and changes nothing", func() {
		c := valid()
		err := c.Set("ui.recorder.max_bufer", "2000")
		Expect(err).To(MatchError(recorder.ErrConfig))
		Expect(err.Error()).To(ContainSubstring(`"ui.recorder.max_bufer"`))
		Expect(c).To(Equal(valid()))
	})

	It("leaves the config unchanged when a value does not parse", func() {
		c := valid()
		Expect(c.Set("ui.recorder.max_buffer", "ten")).NotTo(Succeed())
		Expect(c).To(Equal(valid()))
	})

	It("says which key is wrong and what it got", func() {
		c := valid()
		Expect(c.Set("ui.recorder.max_buffer", "10")).To(Succeed())
		Expect(c.Validate()).To(MatchError("invalid: recorder config: ui.recorder.max_buffer: must be at least 1000, got 10"))
	})

	It("accepts the default config once a worker name is given", func() {
		Expect(recorder.DefaultConfig().Validate()).To(MatchError(ContainSubstring("worker.name: must not be empty")))
		Expect(valid().Validate()).To(Succeed())
	})

	It("checks a worker name on its own with the same rules", func() {
		Expect(recorder.CheckWorkerName("ok_name-1")).To(Succeed())
		Expect(recorder.CheckWorkerName("..")).To(MatchError(recorder.ErrConfig))
	})

	Describe("modes", func() {
		It("is memory-only without storage.dir, and then has no history folder", func() {
			c := valid()
			c.SharedDir = "/mnt/fleet"
			Expect(c.MemoryOnly()).To(BeTrue())
			Expect(c.HistoryDir()).To(BeEmpty())
		})

		DescribeTable("writes files only with ui.enabled and a storage.dir",
			func(ui bool, storage string, want bool) {
				c := valid()
				c.UIEnabled, c.StorageDir = ui, storage
				Expect(c.WritesFiles()).To(Equal(want))
			},
			Entry(nil, true, "/own", true),
			Entry(nil, false, "/own", false),
			Entry(nil, true, "", false),
		)

		DescribeTable("puts the history folder in shared.dir, else storage.dir, under the sanitized cluster",
			func(storage, shared, cluster, want string) {
				c := valid()
				c.StorageDir, c.SharedDir, c.ClusterName = storage, shared, cluster
				Expect(c.MemoryOnly()).To(BeFalse())
				Expect(c.HistoryDir()).To(Equal(filepath.FromSlash(want)))
			},
			Entry("shared.dir set", "/own", "/fleet", "search", "/fleet/history/search"),
			Entry("shared.dir empty", "/own", "", "search", "/own/history/search"),
			Entry("space in the cluster name", "/own", "", "search hot", "/own/history/search_hot"),
			Entry("slash and non-ASCII, one _ per character", "/own", "", "a/b-ç_9", "/own/history/a_b-__9"),
			Entry("empty cluster name", "/own", "", "", "/own/history/default"),
		)
	})
})
