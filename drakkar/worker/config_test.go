// Specs of Load: the YAML keys, the environment and flag overrides and
// their precedence, ignored, moved and bad keys.

package worker_test

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/drakkar/worker"
	"github.com/fb46ecde/records/recordstore"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// writeConfig writes a YAML file into a fresh temp folder.
func writeConfig(text string) string {
	p := filepath.Join(GinkgoT().TempDir(), "worker.yaml")
	Expect(os.WriteFile(p, []byte(text), 0o600)).To(Succeed())
	return p
}

const baseYAML = `
worker:
  name: w1
cluster:
  name: search hot
storage:
  dir: /var/lib/drakkar
shared:
  dir: /mnt/fleet
ui:
  addr: 127.0.0.1:0
  auth_token: s3cret
  merge_enabled: false
  trace:
    history_max_files: 12
    history_max_seconds: 2.5
  recorder:
    rotation_interval_hours: 0.5
    max_buffer: 2000
history:
  archive:
    enabled: true
    window_hours: 1
    due_after_hours: 2
    retention_days: 1
    lock_stale_seconds: 60
  merged_retention_days: 0
cache:
  enabled: true
  flush_interval_seconds: 0.5
fleet:
  registry:
    heartbeat_seconds: 2
    offline_after_seconds: 6
  cache_exchange:
    interval_seconds: 4
executor:
  drain_timeout_seconds: 7
`

var _ = Describe("Load", func() {
	It("reads every section of the spec's keys into the components' configs", func() {
		cfg, err := worker.Load(worker.LoadOptions{File: writeConfig(baseYAML)})
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Recorder.WorkerName).To(Equal("w1"))
		Expect(cfg.Recorder.ClusterName).To(Equal("search hot"))
		Expect(cfg.Recorder.StorageDir).To(Equal("/var/lib/drakkar"))
		Expect(cfg.Recorder.SharedDir).To(Equal("/mnt/fleet"))
		Expect(cfg.Recorder.RotationInterval).To(Equal(30 * time.Minute))
		Expect(cfg.Recorder.MaxBuffer).To(Equal(2000))
		Expect(cfg.Archive.RotationInterval).To(Equal(30*time.Minute), "the shared key reaches the archive pass")
		Expect(cfg.Archive.Window).To(Equal(time.Hour))
		Expect(cfg.Archive.MergedRetention).To(BeZero())
		Expect(cfg.Cache.Enabled).To(BeTrue())
		Expect(cfg.Cache.WorkerName).To(Equal("w1"))
		Expect(cfg.Cache.StorageDir).To(Equal("/var/lib/drakkar"))
		Expect(cfg.Cache.FlushInterval).To(Equal(500 * time.Millisecond))
		Expect(cfg.Cache.ExchangeInterval).To(Equal(4 * time.Second))
		Expect(cfg.UI).To(Equal(worker.UIConfig{Addr: "127.0.0.1:0", AuthToken: "s3cret", MergeEnabled: false,
			TraceHistoryMaxFiles: 12, TraceHistoryMaxTime: 2500 * time.Millisecond}))
		Expect(cfg.Registry).To(Equal(worker.RegistryConfig{Heartbeat: 2 * time.Second, Refresh: 10 * time.Second, OfflineAfter: 6 * time.Second}))
		Expect(cfg.DrainTimeout).To(Equal(7 * time.Second))
		Expect(cfg.Ignored).To(BeEmpty())
	})

	It("keeps the defaults for what the file does not set", func() {
		cfg, err := worker.Load(worker.LoadOptions{File: writeConfig("worker: {name: w}\n")})
		Expect(err).NotTo(HaveOccurred())
		def := worker.DefaultConfig()
		Expect(cfg.UI).To(Equal(def.UI))
		Expect(cfg.UI.Addr).To(Equal("127.0.0.1:8780"))
		Expect(cfg.Recorder.RotationInterval).To(Equal(def.Recorder.RotationInterval))
		Expect(cfg.DrainTimeout).To(Equal(worker.DefaultDrainTimeout))
	})

	It("applies the file, then the environment, then the flags", func() {
		env := map[string]string{
			"DRAKKAR_UI__RECORDER__MAX_BUFFER":        "3000",
			"DRAKKAR_CLUSTER__NAME":                   "from-env",
			"DRAKKAR_EXECUTOR__DRAIN_TIMEOUT_SECONDS": "9",
		}
		cfg, err := worker.Load(worker.LoadOptions{
			File:   writeConfig(baseYAML),
			Getenv: func(k string) string { return env[k] },
			Sets:   []string{"cluster.name=from-flag", "ui.addr=127.0.0.1:9999"},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Recorder.MaxBuffer).To(Equal(3000), "env over file")
		Expect(cfg.DrainTimeout).To(Equal(9*time.Second), "env over file")
		Expect(cfg.Recorder.ClusterName).To(Equal("from-flag"), "flag over env")
		Expect(cfg.Cache.ClusterName).To(Equal("from-flag"))
		Expect(cfg.UI.Addr).To(Equal("127.0.0.1:9999"))
	})

	DescribeTable("names the environment variable of a key",
		func(key, name string) { Expect(worker.EnvName(key)).To(Equal(name)) },
		Entry("a nested key", "ui.recorder.max_buffer", "DRAKKAR_UI__RECORDER__MAX_BUFFER"),
		Entry("a folder", "storage.dir", "DRAKKAR_STORAGE__DIR"),
		Entry("an archive key", "history.archive.window_hours", "DRAKKAR_HISTORY__ARCHIVE__WINDOW_HOURS"),
	)

	DescribeTable("ignores an unknown key inside ui.recorder with a warning",
		func(key string) {
			cfg, err := worker.Load(worker.LoadOptions{File: writeConfig("worker: {name: w}\nui:\n  recorder:\n    " + key + ": 5\n")})
			Expect(err).NotTo(HaveOccurred())
			Expect(cfg.Ignored).To(ConsistOf("ui.recorder." + key))
			Expect(cfg.Recorder).To(Equal(withName(worker.DefaultConfig(), "w").Recorder))
		},
		Entry("the removed rotation_interval_minutes", "rotation_interval_minutes"),
		Entry("the removed retention_hours", "retention_hours"),
		Entry("the removed retention_max_events", "retention_max_events"),
		Entry("any other unknown key", "no_such_knob"),
	)

	DescribeTable("fails with one error naming the key",
		func(yamlText string, sets []string, want string) {
			_, err := worker.Load(worker.LoadOptions{File: writeConfig(yamlText), Sets: sets})
			Expect(err).To(HaveOccurred())
			Expect(errors.Is(err, worker.ErrConfig)).To(BeTrue(), err.Error())
			Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("an unknown key outside ui.recorder", "worker: {name: w}\nui:\n  colour: red\n", nil, "ui.colour: unknown key"),
		Entry("a moved folder key", "worker: {name: w}\nui:\n  db_dir: /x\n", nil, "ui.db_dir: this key moved to storage.dir"),
		Entry("a moved archive key", "worker: {name: w}\nui:\n  recorder:\n    archive:\n      enabled: true\n", nil, "ui.recorder.archive.enabled: this key moved to history.archive.*"),
		Entry("a moved merged retention", "worker: {name: w}\nui:\n  recorder:\n    merged_retention_days: 3\n", nil, "ui.recorder.merged_retention_days: this key moved"),
		Entry("a recorder value that does not parse", "worker: {name: w}\nui:\n  recorder:\n    max_buffer: lots\n", nil, "ui.recorder.max_buffer"),
		Entry("a recorder value out of range", "worker: {name: w}\nui:\n  recorder:\n    max_buffer: 10\n", nil, "ui.recorder.max_buffer: must be at least 1000"),
		Entry("an archive window under the rotation interval", "worker: {name: w}\nhistory:\n  archive:\n    window_hours: 0.25\n", nil, "history.archive.window_hours"),
		Entry("a cache interval of 0", "worker: {name: w}\ncache:\n  flush_interval_seconds: 0\n", nil, "cache.flush_interval_seconds"),
		Entry("a bad bool", "worker: {name: w}\nui:\n  merge_enabled: maybe\n", nil, "ui.merge_enabled: must be true or false"),
		Entry("a bad address", "worker: {name: w}\nui:\n  addr: nowhere\n", nil, "ui.addr: must be host:port"),
		Entry("a bad registry number", "worker: {name: w}\nfleet:\n  registry:\n    heartbeat_seconds: soon\n", nil, "fleet.registry.heartbeat_seconds: must be a number"),
		Entry("a negative drain timeout", "worker: {name: w}\nexecutor:\n  drain_timeout_seconds: -1\n", nil, "executor.drain_timeout_seconds: must be more than 0"),
		Entry("a missing worker name", "storage: {dir: /tmp/x}\n", nil, "worker.name"),
		Entry("a list as a value", "worker: {name: [a, b]}\n", nil, "worker.name: must be a single value"),
		Entry("a document that is not a mapping", "- a\n- b\n", nil, "must be a mapping"),
		Entry("YAML that does not parse", "worker: {name: w\n", nil, "yaml"),
		Entry("a --set without '='", "worker: {name: w}\n", []string{"ui.addr"}, "want key=value"),
		Entry("an unknown --set key", "worker: {name: w}\n", []string{"nope=1"}, "nope: unknown key"),
	)

	It("fails on a missing file naming it", func() {
		_, err := worker.Load(worker.LoadOptions{File: filepath.Join(GinkgoT().TempDir(), "none.yaml")})
		Expect(errors.Is(err, worker.ErrConfig)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("none.yaml"))
	})

	It("reads the spec's copy-pasteable config", func() {
		cfg, err := worker.Load(worker.LoadOptions{File: writeConfig(`storage:
  dir: /var/lib/drakkar
shared:
  dir: /mnt/fleet
ui:
  recorder:
    rotation_interval_hours: 1
history:
  archive:
    enabled: true
    window_hours: 24
    due_after_hours: 48
    retention_days: 30
    lock_stale_seconds: 7200
  merged_retention_days: 32
`), Sets: []string{"worker.name=w"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Archive.Window).To(Equal(24 * time.Hour))
		Expect(cfg.Archive.Retention).To(Equal(30 * 24 * time.Hour))
		Expect(cfg.Archive.MergedRetention).To(Equal(32 * 24 * time.Hour))
	})
})

// withName is cfg with worker.name set and resolved.
func withName(cfg worker.Config, name string) worker.Config {
	Expect(cfg.Set("worker.name", name)).To(Succeed())
	cfg.Resolve()
	return cfg
}
