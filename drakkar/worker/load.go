// load: a Config from a YAML file, DRAKKAR_* environment variables and
// key=value flags, in that order of precedence (the last wins).

package worker

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/fb46ecde/records/recordstore"

	"go.yaml.in/yaml/v3"
)

// EnvPrefix starts the name of every environment variable Load reads.
const EnvPrefix = "DRAKKAR_"

// LoadOptions say where Load reads the configuration from.
type LoadOptions struct {
	// File is the YAML file (--config); "" reads none.
	File string
	// Getenv reads the environment; nil reads none. For every key of
	// Keys, Load reads the variable EnvName(key).
	Getenv func(string) string
	// Sets are key=value pairs given on the command line, applied last in
	// their order (the CLI turns --name, --storage etc. into these).
	Sets []string
	// Logger receives config_key_ignored warnings; nil discards them.
	Logger *slog.Logger
}

// EnvName is the environment variable that overrides key: EnvPrefix, then
// the key in upper case with each '.' written as "__" (ui.recorder.max_buffer
// is DRAKKAR_UI__RECORDER__MAX_BUFFER, storage.dir is DRAKKAR_STORAGE__DIR).
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

// Load builds a validated Config: DefaultConfig, then the YAML file, then
// the environment, then Sets. An unknown key inside ui.recorder is ignored
// with a warning (config_key_ignored) and listed in Config.Ignored, as the
// spec says for the removed rotation_interval_minutes, retention_hours and
// retention_max_events; any other unknown key, a moved key (see the
// worker's docs), a value that does not parse or is out of range fails
// the load with one ErrConfig naming the key. Nothing is written.
func Load(opts LoadOptions) (Config, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := DefaultConfig()
	apply := func(source, key, value string) error {
		err := cfg.Set(key, value)
		if err != nil && ignoredKey(key) && isUnknown(key, err) {
			log.Warn("config_key_ignored", "key", key, "source", source, "reason", "unknown key inside ui.recorder")
			cfg.Ignored = append(cfg.Ignored, key)
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		return nil
	}
	if opts.File != "" {
		pairs, err := readYAML(opts.File)
		if err != nil {
			return Config{}, err
		}
		for _, p := range pairs {
			if err := apply(opts.File, p[0], p[1]); err != nil {
				return Config{}, err
			}
		}
	}
	if opts.Getenv != nil {
		for _, key := range Keys() {
			if v, name := opts.Getenv(EnvName(key)), EnvName(key); v != "" {
				if err := apply(name, key, v); err != nil {
					return Config{}, err
				}
			}
		}
	}
	for _, s := range opts.Sets {
		key, value, ok := strings.Cut(s, "=")
		if !ok || key == "" {
			return Config{}, recordstore.Errorf(ErrConfig, "--set %q: want key=value", s)
		}
		if err := apply("--set", strings.TrimSpace(key), value); err != nil {
			return Config{}, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// readYAML reads a YAML file into dotted key/value pairs in file order.
func readYAML(path string) ([][2]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, recordstore.Errorf(ErrConfig, "read config %s: %w", path, err)
	}
	pairs, err := ParseYAML(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pairs, nil
}

// ParseYAML flattens a YAML document of nested mappings into dotted
// key/value pairs in document order ({ui: {recorder: {max_buffer: 5}}} is
// ui.recorder.max_buffer=5). A scalar keeps its text; null and an empty
// value are "". A list, an alias or a non-scalar key is an ErrConfig
// naming the key, as is a document that is not a mapping.
func ParseYAML(b []byte) ([][2]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, recordstore.Errorf(ErrConfig, "yaml: %w", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, recordstore.Errorf(ErrConfig, "yaml: the document must be a mapping of keys")
	}
	var pairs [][2]string
	err := flatten("", root, &pairs)
	return pairs, err
}

func flatten(prefix string, n *yaml.Node, pairs *[][2]string) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return recordstore.Errorf(ErrConfig, "%s: a key must be a plain name (line %d)", strings.TrimSuffix(prefix, "."), k.Line)
		}
		key := prefix + k.Value
		switch v.Kind {
		case yaml.MappingNode:
			if err := flatten(key+".", v, pairs); err != nil {
				return err
			}
		case yaml.ScalarNode:
			val := v.Value
			if v.Tag == "!!null" {
				val = ""
			}
			*pairs = append(*pairs, [2]string{key, val})
		default:
			return recordstore.Errorf(ErrConfig, "%s: must be a single value, not a list or alias (line %d)", key, v.Line)
		}
	}
	return nil
}
