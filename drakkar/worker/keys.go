// keys: the keys the worker owns itself (the debug API's and the drain
// timeout), with their parsers and range checks.

package worker

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/internal/configkeys"
	"github.com/fb46ecde/records/recordstore"
)

// ownKeys are the keys no component's Set knows; they parse as every
// drakkar key does (configkeys).
var ownKeys = configkeys.Table[Config]{
	configkeys.String("ui.addr", func(c *Config) *string { return &c.UI.Addr }, checkAddr),
	{
		Name:  "ui.url",
		Set:   func(c *Config, v string) error { c.UI.URL = strings.TrimRight(v, "/"); return nil },
		Get:   func(c Config) string { return c.UI.URL },
		Check: func(c Config) error { return checkURL(c.UI.URL) },
	},
	configkeys.String("ui.auth_token", func(c *Config) *string { return &c.UI.AuthToken }, nil),
	configkeys.Bool("ui.insecure_listen", func(c *Config) *bool { return &c.UI.InsecureListen }),
	configkeys.Bool("ui.merge_enabled", func(c *Config) *bool { return &c.UI.MergeEnabled }),
	configkeys.Int("ui.trace.history_max_files", 1, func(c *Config) *int { return &c.UI.TraceHistoryMaxFiles }),
	configkeys.Duration("ui.trace.history_max_seconds", time.Second, func(c *Config) *time.Duration { return &c.UI.TraceHistoryMaxTime }, configkeys.Positive),
	configkeys.Duration("executor.drain_timeout_seconds", time.Second, func(c *Config) *time.Duration { return &c.DrainTimeout }, configkeys.Positive),
}

func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("must be host:port, got " + recordstore.Quote(addr))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return errors.New("port must be 0 to 65535, got " + recordstore.Quote(port))
	}
	return nil
}

func checkURL(u string) error {
	if u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return errors.New("must start with http:// or https://, got " + recordstore.Quote(u))
	}
	return nil
}
