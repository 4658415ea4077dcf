// query version: the build's version and Go toolchain.

package cli

import (
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is the release version; builds may set it with
// -ldflags "-X github.com/fb46ecde/records/cmd/query/internal/cli.Version=v1.2.3".
// When empty, the module version recorded in the binary is used.
var Version string

// versionInfo is the output of query version.
type versionInfo struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Revision string `json:"revision,omitempty"`
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of this build",
		Args:  cobra.NoArgs,
		RunE: runE(func(*cobra.Command, []string) error {
			return a.printOne(buildVersion())
		}),
	}
}

func buildVersion() versionInfo {
	v := versionInfo{Version: Version, Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v.Version == "" {
		v.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			v.Revision = s.Value
		}
	}
	return v
}
