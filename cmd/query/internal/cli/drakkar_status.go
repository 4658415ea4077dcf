// query drakkar status: a running worker's state, from its debug API's
// status route.

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fb46ecde/records/drakkar/debugapi"
	"github.com/fb46ecde/records/recordstore"
	"github.com/spf13/cobra"
)

// maxStatusBody bounds the status answer read.
const maxStatusBody = 16 << 20

func (a *app) drakkarStatusCmd() *cobra.Command {
	var base, token string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status --url http://HOST:PORT [--token T]",
		Short: "Print a running worker's state: backlog, last seal and archive pass, peers, next rotation",
		Long: `Ask the worker whose debug API is at --url for its state
(GET ` + debugapi.StatusPath + `, our extension of the API) and print it as
one JSON object: worker, cluster; recorder (owner, live_file, backlog —
each closed file not yet in the history folder with why it is there:
reason pending, seal, publish or quarantine, the last error, failed_at and
failures —, last_seal, next_rotation); archive (the history folder and
this worker's last pass: its report, error and time); peers (each peer's
cache pull cursor, last pull, ok, last_error and last_error_at).

--token is ui.auth_token when the worker has one (default: the
DRAKKAR_UI__AUTH_TOKEN environment variable). A URL that is not http(s)
fails with code invalid; a worker that cannot be reached, or that answers
anything but 200, fails naming the status and the worker's answer.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("token") {
				token = a.env.Getenv("DRAKKAR_UI__AUTH_TOKEN")
			}
			body, err := fetchStatus(cmd, base, token, timeout)
			if err != nil {
				return err
			}
			return a.printOne(body)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&base, "url", "", "the worker's debug API, e.g. http://127.0.0.1:8780 (required)")
	f.StringVar(&token, "token", "", "ui.auth_token of the worker")
	f.DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for the answer")
	_ = cmd.MarkFlagRequired("url")
	return cmd
}

// fetchStatus GETs the status route of the worker at base.
func fetchStatus(cmd *cobra.Command, base, token string, timeout time.Duration) (json.RawMessage, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, recordstore.Invalidf("--url %q: want http://HOST:PORT", base)
	}
	if timeout <= 0 {
		return nil, usagef("--timeout must be positive, got %s", timeout)
	}
	target := strings.TrimSuffix(base, "/") + debugapi.StatusPath
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, target, nil)
	if err != nil {
		return nil, recordstore.Invalidf("--url %q: %v", base, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("worker at %s: %w", base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody))
	if err != nil {
		return nil, fmt.Errorf("worker at %s: read the answer: %w", base, err)
	}
	if resp.StatusCode != http.StatusOK {
		text := strings.TrimSpace(string(b))
		if len(text) > 200 {
			text = text[:200] + "..."
		}
		if resp.StatusCode == http.StatusUnauthorized {
			return nil, recordstore.Invalidf("worker at %s answered %d (a wrong or missing --token): %s", base, resp.StatusCode, text)
		}
		return nil, fmt.Errorf("worker at %s answered %d: %s", base, resp.StatusCode, text)
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("worker at %s: the status answer is not JSON", base)
	}
	return json.RawMessage(b), nil
}
