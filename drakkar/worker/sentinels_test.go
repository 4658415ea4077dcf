// The sentinel errors of every drakkar package carry a code
// (recordstore.Code) other than internal, unless the table below says the
// sentinel is meant to be internal. The exported Err* variables are found
// in the packages' source, so a new sentinel cannot be left out.

package worker_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fb46ecde/records/drakkar/archive"
	"github.com/fb46ecde/records/drakkar/cache"
	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/drakkar/debugapi"
	"github.com/fb46ecde/records/drakkar/merge"
	"github.com/fb46ecde/records/drakkar/recorder"
	"github.com/fb46ecde/records/drakkar/registry"
	"github.com/fb46ecde/records/drakkar/worker"
	"github.com/fb46ecde/records/recordstore"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sentinels are the exported Err* variables of the drakkar packages, by
// "<package>.<name>", with the code each must have.
var sentinels = map[string]struct {
	err  error
	code string
}{
	"archive.ErrConfig":             {archive.ErrConfig, "invalid"},
	"archive.ErrOptions":            {archive.ErrOptions, "invalid"},
	"archive.ErrFenced":             {archive.ErrFenced, "fenced"},
	"archive.ErrCorruptArchive":     {archive.ErrCorruptArchive, "corrupt"},
	"archive.ErrArchiveAppeared":    {archive.ErrArchiveAppeared, "exists"},
	"archive.ErrNotArchived":        {archive.ErrNotArchived, recordstore.CodeInternal},
	"cache.ErrBadEntry":             {cache.ErrBadEntry, "invalid"},
	"cache.ErrConfig":               {cache.ErrConfig, "invalid"},
	"cache.ErrOff":                  {cache.ErrOff, "unsupported"},
	"cache.ErrBadPage":              {cache.ErrBadPage, "invalid"},
	"dbfiles.ErrBadJSON":            {dbfiles.ErrBadJSON, "invalid"},
	"dbfiles.ErrUnsupported":        {dbfiles.ErrUnsupported, "invalid"},
	"dbfiles.ErrBadTime":            {dbfiles.ErrBadTime, "invalid"},
	"dbfiles.ErrBadMeta":            {dbfiles.ErrBadMeta, "invalid"},
	"dbfiles.ErrBadLock":            {dbfiles.ErrBadLock, "invalid"},
	"debugapi.ErrOptions":           {debugapi.ErrOptions, "invalid"},
	"merge.ErrOutputExists":         {merge.ErrOutputExists, "invalid"},
	"merge.ErrNoSources":            {merge.ErrNoSources, "invalid"},
	"merge.ErrBadPath":              {merge.ErrBadPath, "invalid"},
	"merge.ErrNothingMerged":        {merge.ErrNothingMerged, "invalid"},
	"merge.ErrUnreadable":           {merge.ErrUnreadable, "invalid"},
	"merge.ErrNotSQLite":            {merge.ErrNotSQLite, "invalid"},
	"merge.ErrUnknownFormat":        {merge.ErrUnknownFormat, "invalid"},
	"merge.ErrDuplicateSource":      {merge.ErrDuplicateSource, "invalid"},
	"recorder.ErrConfig":            {recorder.ErrConfig, "invalid"},
	"recorder.ErrEvent":             {recorder.ErrEvent, "invalid"},
	"recorder.ErrNotRecorderFile":   {recorder.ErrNotRecorderFile, "invalid"},
	"recorder.ErrOutcomeUnknown":    {recorder.ErrOutcomeUnknown, "outcome_unknown"},
	"recorder.ErrDestinationExists": {recorder.ErrDestinationExists, "exists"},
	"registry.ErrBadCard":           {registry.ErrBadCard, "invalid"},
	"registry.ErrConfig":            {registry.ErrConfig, "invalid"},
	"worker.ErrConfig":              {worker.ErrConfig, "invalid"},
}

// meantInternal are the sentinels whose code is internal on purpose: a
// failed archive window's own cause is in the report, and the command
// that reports it exits with code internal (docs/cli.md).
var meantInternal = []string{"archive.ErrNotArchived"}

// exportedSentinels parses the non-test Go files of every package under
// drakkar/ and returns "<package>.<name>" for each exported package-level
// variable whose name starts with Err.
func exportedSentinels() []string {
	var out []string
	dirs, err := filepath.Glob(filepath.Join("..", "*"))
	Expect(err).NotTo(HaveOccurred())
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() || filepath.Base(dir) == "internal" {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		Expect(err).NotTo(HaveOccurred())
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
			Expect(err).NotTo(HaveOccurred())
			for _, decl := range file.Decls {
				gen, ok := decl.(*ast.GenDecl)
				if !ok || gen.Tok != token.VAR {
					continue
				}
				for _, spec := range gen.Specs {
					for _, name := range spec.(*ast.ValueSpec).Names {
						if name.IsExported() && strings.HasPrefix(name.Name, "Err") {
							out = append(out, file.Name.Name+"."+name.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

var _ = Describe("The drakkar packages' sentinel errors", func() {
	It("are all in the table of codes", func() {
		found := exportedSentinels()
		Expect(found).To(ContainElements("archive.ErrFenced", "worker.ErrConfig", "dbfiles.ErrBadMeta"), "the source was read")
		var listed []string
		for name := range sentinels {
			listed = append(listed, name)
		}
		Expect(listed).To(ConsistOf(found))
	})

	It("carry their code, also when wrapped, and map to internal only when meant to", func() {
		for name, s := range sentinels {
			Expect(recordstore.Code(s.err)).To(Equal(s.code), name)
			if s.code == recordstore.CodeInternal {
				Expect(meantInternal).To(ContainElement(name), "%s maps to internal", name)
			}
			var e *recordstore.Error
			Expect(errors.As(s.err, &e)).To(BeTrue(), "%s is a recordstore.Error", name)

			wrapped := fmt.Errorf("somewhere: %w", recordstore.Errorf(s.err, "at %s", "x"))
			Expect(recordstore.Code(wrapped)).To(Equal(s.code), name)
			Expect(errors.Is(wrapped, s.err)).To(BeTrue(), name)
			Expect(wrapped.Error()).To(HavePrefix("somewhere: " + s.err.Error() + ": at x"))
		}
	})
})
