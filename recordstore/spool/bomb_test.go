// A gzip bomb inside an otherwise valid batch: the owner's read path must
// stop at the byte cap with ErrTooLarge, allocating about the cap.

package spool_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/klauspost/compress/gzip"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// replaceData swaps the data file of entry 0 of the batch at dir for
// content, fixing its size and SHA-256 in the manifest so that only the
// content is hostile.
func replaceData(dir string, content []byte) {
	GinkgoHelper()
	mp := filepath.Join(dir, spool.ManifestFile)
	data, err := os.ReadFile(mp)
	Expect(err).NotTo(HaveOccurred())
	var m spool.Manifest
	Expect(json.Unmarshal(data, &m)).To(Succeed())
	sum := sha256.Sum256(content)
	m.Entries[0].Bytes, m.Entries[0].SHA256 = int64(len(content)), hex.EncodeToString(sum[:])
	data, err = m.Encode()
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(mp, data, 0o600)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(dir, m.Entries[0].File), content, 0o600)).To(Succeed())
}

var _ = Describe("a gzip bomb in a batch", func() {
	It("is refused with ErrTooLarge at the byte cap, without allocating the inflated size", func() {
		ctx := context.Background()
		d := newDir(spool.Options{Limits: spool.Limits{MaxBytes: 4 << 20}})
		name, err := d.Publish(ctx, sampleBatch(spool.NewIdentity(""), normalizeAll(allTypes(), edgeRows())), spool.FormatNDJSONGz)
		Expect(err).NotTo(HaveOccurred())

		var bomb bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
		_, _ = zw.Write([]byte(`{"s":"`))
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for range 64 { // one 64 MiB string
			_, _ = zw.Write(chunk)
		}
		Expect(zw.Close()).To(Succeed())
		replaceData(d.Path(spool.StateIncoming, name.String()), bomb.Bytes())

		b, err := d.Load(ctx, spool.StateIncoming, name.String())
		Expect(err).NotTo(HaveOccurred())
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = b.ReadAll(ctx)
		runtime.ReadMemStats(&after)
		Expect(err).To(MatchError(spool.ErrTooLarge))
		Expect(err).To(MatchError(recordstore.ErrCapacity))
		Expect(recordstore.Code(err)).To(Equal("capacity"))
		Expect(after.TotalAlloc - before.TotalAlloc).To(BeNumerically("<", 24<<20))
	})
})
