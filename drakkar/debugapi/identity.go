package debugapi

import (
	"net/http"
	"runtime/debug"
	"strings"
)

// Version is the build stamp GET /api/v1/identity reports as
// backend_version; builds may set it with
// -ldflags "-X github.com/fb46ecde/records/drakkar/debugapi.Version=v1.2.3".
// When empty, the main module's version recorded in the binary is used,
// and "dev" when there is none (a plain go build or go test).
var Version string

// Identity timeline defaults: the worker has no ui.timeline keys, so the
// identity card carries these fixed values.
const (
	TimelineHistoryFactor = 100
	TimelineMaxAgeMinutes = 10
)

// Identity is GET /api/v1/identity's body, the public contract's identity
// card.
type Identity struct {
	// WorkerID is worker.name.
	WorkerID string `json:"worker_id"`
	// Cluster is cluster.name; null when empty.
	Cluster *string `json:"cluster"`
	// ConfigSummary is one line naming the worker's main settings.
	ConfigSummary string `json:"config_summary"`
	// Backend is always "go".
	Backend string `json:"backend"`
	// BackendVersion is the build stamp (see Version).
	BackendVersion string `json:"backend_version"`
	// UIVersion is always null and UISource always "builtin": the worker
	// serves no UI bundle.
	UIVersion *string `json:"ui_version"`
	UISource  string  `json:"ui_source"`
	// LinkBases is always empty: there are no ui.link_bases keys.
	LinkBases map[string]string `json:"link_bases"`
	// CustomRenderers is always false: there is no renderers module.
	CustomRenderers bool `json:"custom_renderers"`
	// Timeline is the fixed timeline settings.
	Timeline Timeline `json:"timeline"`
}

// Timeline is the identity card's timeline settings.
type Timeline struct {
	HistoryFactor int               `json:"history_factor"`
	MaxAgeMinutes int               `json:"max_age_minutes"`
	ColorRules    []any             `json:"color_rules"`
	Labels        map[string]string `json:"labels"`
}

// buildVersion is Version, else the main module's version, else "dev".
func buildVersion() string {
	if Version != "" {
		return Version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// configSummary is one line of the settings an operator looks for first.
func (c Config) configSummary() string {
	onOff := map[bool]string{true: "on", false: "off"}
	parts := []string{"worker=" + c.WorkerName, "cluster=" + c.ClusterName}
	if c.StorageDir == "" {
		parts = append(parts, "storage=memory-only")
	} else {
		parts = append(parts, "storage.dir="+c.StorageDir, "shared.dir="+c.shared())
	}
	parts = append(parts, "merge="+onOff[c.MergeEnabled], "auth="+onOff[c.AuthToken != ""])
	return strings.Join(parts, " ")
}

// identity serves GET /api/v1/identity.
func (s *server) identity(w http.ResponseWriter, _ *http.Request) {
	c := s.opts.Config
	id := Identity{WorkerID: c.WorkerName, ConfigSummary: c.configSummary(), Backend: "go",
		BackendVersion: buildVersion(), UISource: "builtin", LinkBases: map[string]string{},
		Timeline: Timeline{HistoryFactor: TimelineHistoryFactor, MaxAgeMinutes: TimelineMaxAgeMinutes,
			ColorRules: []any{}, Labels: map[string]string{}}}
	if c.ClusterName != "" {
		cl := c.ClusterName
		id.Cluster = &cl
	}
	writeJSON(w, http.StatusOK, id)
}
