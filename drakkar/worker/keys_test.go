// Specs of the one key table: the same key text set through each
// component's Set (recorder, archive, cache, registry, the worker's own
// keys and the worker's routing Set) reads as the same value.

package worker_test

import (
	"time"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/registry"
	"github.com/fb46ecde/records/drakkar/worker"
	"github.com/fb46ecde/records/recordstore"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// keyReader sets one key of one component from text and returns the
// field it set.
type keyReader struct {
	what string
	read func(text string) (any, error)
}

// through sets key through a component's Set and reads the field back.
func through[C any](what, key string, start func() C, set func(*C, string, string) error, field func(C) any) keyReader {
	return keyReader{what: what + " " + key, read: func(text string) (any, error) {
		c := start()
		if err := set(&c, key, text); err != nil {
			return nil, err
		}
		return field(c), nil
	}}
}

func viaRecorder(key string, field func(recorder.Config) any) keyReader {
	return through("recorder", key, recorder.DefaultConfig, (*recorder.Config).Set, field)
}

func viaArchive(key string, field func(archive.Config) any) keyReader {
	return through("archive", key, archive.DefaultConfig, (*archive.Config).Set, field)
}

func viaCache(key string, field func(cache.Config) any) keyReader {
	return through("cache", key, cache.DefaultConfig, (*cache.Config).Set, field)
}

func viaRegistry(key string, field func(registry.Config) any) keyReader {
	return through("registry", key, registry.DefaultConfig, (*registry.Config).Set, field)
}

func viaWorker(key string, field func(worker.Config) any) keyReader {
	return through("worker", key, worker.DefaultConfig, (*worker.Config).Set, field)
}

var (
	boolReaders = []keyReader{
		viaRecorder("ui.enabled", func(c recorder.Config) any { return c.UIEnabled }),
		viaRecorder("ui.recorder.store_stdin", func(c recorder.Config) any { return c.StoreStdin }),
		viaArchive("history.archive.enabled", func(c archive.Config) any { return c.Enabled }),
		viaCache("cache.enabled", func(c cache.Config) any { return c.Enabled }),
		viaCache("fleet.cache_exchange.enabled", func(c cache.Config) any { return c.Exchange }),
		viaWorker("ui.merge_enabled", func(c worker.Config) any { return c.UI.MergeEnabled }),
		viaWorker("ui.enabled", func(c worker.Config) any { return c.Recorder.UIEnabled }),
		viaWorker("history.archive.enabled", func(c worker.Config) any { return c.Archive.Enabled }),
	}
	hourReaders = []keyReader{
		viaRecorder("ui.recorder.rotation_interval_hours", func(c recorder.Config) any { return c.RotationInterval }),
		viaArchive("ui.recorder.rotation_interval_hours", func(c archive.Config) any { return c.RotationInterval }),
		viaArchive("history.archive.window_hours", func(c archive.Config) any { return c.Window }),
		viaWorker("ui.recorder.rotation_interval_hours", func(c worker.Config) any { return c.Recorder.RotationInterval }),
		viaWorker("ui.recorder.rotation_interval_hours", func(c worker.Config) any { return c.Archive.RotationInterval }),
	}
	secondReaders = []keyReader{
		viaRecorder("ui.recorder.flush_interval_seconds", func(c recorder.Config) any { return c.FlushInterval }),
		viaArchive("history.archive.lock_stale_seconds", func(c archive.Config) any { return c.LockStale }),
		viaCache("cache.flush_interval_seconds", func(c cache.Config) any { return c.FlushInterval }),
		viaRegistry("fleet.registry.heartbeat_seconds", func(c registry.Config) any { return c.Heartbeat }),
		viaWorker("fleet.registry.refresh_seconds", func(c worker.Config) any { return c.Registry.Refresh }),
		viaWorker("cache.cleanup_interval_seconds", func(c worker.Config) any { return c.Cache.CleanupInterval }),
		viaWorker("executor.drain_timeout_seconds", func(c worker.Config) any { return c.DrainTimeout }),
	}
	intReaders = []keyReader{
		viaRecorder("ui.recorder.max_flush_retries", func(c recorder.Config) any { return c.MaxFlushRetries }),
		viaCache("cache.max_memory_entries", func(c cache.Config) any { return c.MaxMemoryEntries }),
		viaWorker("ui.trace.history_max_files", func(c worker.Config) any { return c.UI.TraceHistoryMaxFiles }),
		viaWorker("ui.recorder.max_buffer", func(c worker.Config) any { return c.Recorder.MaxBuffer }),
	}
)

var _ = Describe("The key table every component parses with", func() {
	DescribeTable("reads one key text as one value, whichever component reads it",
		func(readers []keyReader, text string, want any) {
			for _, r := range readers {
				got, err := r.read(text)
				Expect(err).NotTo(HaveOccurred(), "%s=%q", r.what, text)
				Expect(got).To(Equal(want), "%s=%q", r.what, text)
			}
		},
		Entry("a fraction of an hour, rounded to the nearest nanosecond", hourReaders, "2.3", 2*time.Hour+18*time.Minute),
		Entry("a fraction of a second, rounded half away from zero", secondReaders, "0.0000000015", 2*time.Nanosecond),
		Entry("a duration with spaces around it", secondReaders, " 4.5 ", 4500*time.Millisecond),
		Entry("a duration in exponent form", hourReaders, "1e-3", 3600*time.Millisecond),
		Entry("true with spaces around it", boolReaders, " true ", true),
		Entry("false with a tab before it", boolReaders, "\tfalse", false),
		Entry("an integer with spaces around it", intReaders, " 1200 ", 1200),
	)

	DescribeTable("refuses the same texts everywhere, with code invalid and the key named",
		func(readers []keyReader, text string) {
			for _, r := range readers {
				_, err := r.read(text)
				Expect(err).To(HaveOccurred(), "%s=%q", r.what, text)
				Expect(recordstore.Code(err)).To(Equal(recordstore.Code(recordstore.ErrInvalid)), "%s: %v", r.what, err)
				Expect(err.Error()).To(ContainSubstring(keyOf(r)))
			}
		},
		Entry("a bool spelled yes", boolReaders, "yes"),
		Entry("a bool in capitals", boolReaders, "TRUE"),
		Entry("an empty bool", boolReaders, ""),
		Entry("a duration that is not a number", secondReaders, "soon"),
		Entry("an infinite duration", hourReaders, "Inf"),
		Entry("a duration past time.Duration's range", hourReaders, "3e6"),
		Entry("an integer with a fraction", intReaders, "12.5"),
	)
})

// keyOf is the key a reader sets: the last word of its description.
func keyOf(r keyReader) string {
	for i := len(r.what) - 1; i >= 0; i-- {
		if r.what[i] == ' ' {
			return r.what[i+1:]
		}
	}
	return r.what
}
