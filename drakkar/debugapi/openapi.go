package debugapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	"go.yaml.in/yaml/v3"
)

// OpenAPIYAML is the worker API's OpenAPI 3.1 document, written by hand
// beside the handlers (openapi.yaml); GET /api/v1/openapi.json serves it
// as JSON.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// openAPIJSON converts OpenAPIYAML to JSON.
func openAPIJSON() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(OpenAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml as JSON: %w", err)
	}
	return b, nil
}

// openAPI serves GET /api/v1/openapi.json.
func (s *server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store, private")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.openapi)
}
