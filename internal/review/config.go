package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rowkit/rowkit/internal/regfile"
)

// RepoConfigName is the repository-local config file, read only with
// --allow-repo-config: otherwise a repository could ship
// {"test": {"argv": ["sh", "-c", "..."]}} and have it run by name.
const RepoConfigName = "rowkit.json"

// maxConfigBytes bounds a config file.
const maxConfigBytes = 1 << 20

// Config is the operator's validation allowlist.
type Config struct {
	Validations map[string]ConfigValidation `json:"validations"`
	MCP         *ConfigMCP                  `json:"mcp,omitempty"`
}

// ConfigValidation is one named command.
type ConfigValidation struct {
	Argv        []string `json:"argv"`
	TimeoutMs   *int64   `json:"timeoutMs,omitempty"`
	Description string   `json:"description,omitempty"`
}

// ConfigMCP says what an MCP caller may run.
type ConfigMCP struct {
	AllowValidations []string `json:"allowValidations"`
}

// LoadConfig reads and checks a config file strictly: unknown keys, wrong
// types and bad values are errors naming the key. A relative path is taken
// relative to dir (the caller's working directory; "" takes it as it is)
// and named as given.
func LoadConfig(dir, path string) (*Config, error) {
	name := path
	if dir != "" && !filepath.IsAbs(path) {
		name = dir + "/" + path
	}
	// A FIFO or device would block the open or the read.
	f, _, err := regfile.Open(os.Stat, os.OpenFile, name)
	if err != nil {
		return nil, errorf(CodeConfig, fmt.Sprintf("config %s: %v", path, unwrapPath(err)), "")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(regfile.Reader(f), maxConfigBytes+1))
	if err != nil {
		return nil, errorf(CodeConfig, fmt.Sprintf("config %s: %v", path, unwrapPath(err)), "")
	}
	if len(data) > maxConfigBytes {
		return nil, errorf(CodeConfig, fmt.Sprintf("config %s is larger than %d bytes", path, maxConfigBytes), "")
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, errorf(CodeConfig, fmt.Sprintf("config %s: %v", path, err), "")
	}
	return c, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ParseConfig decodes and checks a config document.
func ParseConfig(data []byte) (*Config, error) {
	var top struct {
		Validations map[string]json.RawMessage `json:"validations"`
		MCP         json.RawMessage            `json:"mcp,omitempty"`
	}
	if err := strict(data, &top, ""); err != nil {
		return nil, err
	}
	var mcp *ConfigMCP
	if top.MCP != nil {
		mcp = new(ConfigMCP)
		if err := strict(top.MCP, mcp, "mcp."); err != nil {
			return nil, err
		}
	}
	if top.Validations == nil {
		return nil, errors.New(`key "validations" is missing (an empty allowlist is {})`)
	}
	c := Config{Validations: map[string]ConfigValidation{}, MCP: mcp}
	for n, raw := range top.Validations {
		var v ConfigValidation
		if err := strict(raw, &v, "validations."+n+"."); err != nil {
			return nil, err
		}
		c.Validations[n] = v
	}
	names := make([]string, 0, len(c.Validations))
	for n := range c.Validations {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := c.Validations[n]
		key := "validations." + n
		if !validName(n) {
			return nil, fmt.Errorf("key %q: a validation name uses only letters, digits, '.', '_' and '-'", key)
		}
		if len(v.Argv) == 0 || v.Argv[0] == "" {
			return nil, fmt.Errorf("key %q: argv must be a non-empty array whose first element names a program", key+".argv")
		}
		for i, a := range v.Argv {
			if strings.IndexByte(a, 0) >= 0 {
				return nil, fmt.Errorf("key %q: argv[%d] contains a NUL byte", key+".argv", i)
			}
		}
		if v.TimeoutMs != nil && (*v.TimeoutMs <= 0 || *v.TimeoutMs > 24*3600*1000) {
			return nil, fmt.Errorf("key %q: must be between 1 and 86400000", key+".timeoutMs")
		}
	}
	if c.MCP != nil {
		for i, n := range c.MCP.AllowValidations {
			if _, ok := c.Validations[n]; !ok {
				return nil, fmt.Errorf("key %q: %q is not a validation in this config", fmt.Sprintf("mcp.allowValidations[%d]", i), n)
			}
		}
	}
	return &c, nil
}

func validName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Plan resolves a named validation, with def as its timeout when the config
// sets none.
func (c *Config) Plan(name string, def time.Duration) (Planned, error) {
	v, ok := c.Validations[name]
	if !ok {
		var names []string
		for n := range c.Validations {
			names = append(names, n)
		}
		sort.Strings(names)
		return Planned{}, errorf(CodeValidationName, fmt.Sprintf("the validation name %q is not in the config", name), "known: "+strings.Join(names, ", "))
	}
	t := def
	if v.TimeoutMs != nil {
		t = time.Duration(*v.TimeoutMs) * time.Millisecond
	}
	return Planned{ID: name, Argv: v.Argv, Timeout: t}, nil
}

// strict decodes one JSON value into v, refusing unknown keys and trailing
// data; errors name the key, prefixed by prefix.
func strict(data []byte, v any, prefix string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field == "":
			if prefix == "" {
				return errors.New("the config must be a JSON object")
			}
			return fmt.Errorf("key %q must be a JSON object", strings.TrimSuffix(prefix, "."))
		case errors.As(err, &te):
			return fmt.Errorf("key %q: %s is not a %s", prefix+te.Field, te.Value, te.Type)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return fmt.Errorf("unknown key %q", prefix+name)
		}
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}
