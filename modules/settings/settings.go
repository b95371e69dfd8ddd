// Package settings reads run parameters from files in JSON, YAML or TOML, the
// formats benchmark users keep their settings in (settings.json,
// bench_config.yaml, config.toml). It is the 'llmrun/config' JavaScript
// module; js.go is its binding.
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"

	"github.com/llmrun/llmrun/internal/capped"
)

// Format is a configuration file format.
type Format string

// The supported formats.
const (
	JSON Format = "json"
	YAML Format = "yaml"
	TOML Format = "toml"
)

// FormatOf returns the format a file name's extension names.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		return JSON, nil
	case ".yaml", ".yml":
		return YAML, nil
	case ".toml":
		return TOML, nil
	}
	return "", fmt.Errorf("%s: unknown configuration format: use a .json, .yaml, .yml or .toml file", path)
}

// ParseFormat reads a format name ("json", "yaml", "yml", "toml").
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(name) {
	case "json":
		return JSON, nil
	case "yaml", "yml":
		return YAML, nil
	case "toml":
		return TOML, nil
	}
	return "", fmt.Errorf("unknown configuration format %q: want json, yaml or toml", name)
}

// MaxFileSize bounds a configuration file Load reads.
const MaxFileSize = 16 << 20

// Load reads and parses the file at path, choosing the format by its
// extension. The top level must be a table (an object). The file must be
// a regular file (or a named pipe) of at most MaxFileSize bytes.
func Load(path string) (map[string]any, error) {
	format, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	data, err := capped.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	cfg, err := Parse(data, format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Parse parses a document whose top level is a table. Values become what
// JSON would give: strings, float64 or int64 numbers, booleans, nil,
// []any and map[string]any; TOML dates become RFC 3339 strings.
func Parse(data []byte, format Format) (map[string]any, error) {
	var doc any
	switch format {
	case JSON:
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, jsonError(data, err)
		}
	case YAML:
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("invalid YAML: %w", err)
		}
	case TOML:
		var m map[string]any
		if _, err := toml.Decode(string(data), &m); err != nil {
			var pe toml.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("invalid TOML at line %d: %s", pe.Position.Line, pe.Message)
			}
			return nil, fmt.Errorf("invalid TOML: %w", err)
		}
		doc = m
	default:
		return nil, fmt.Errorf("unknown configuration format %q", format)
	}
	if doc == nil {
		return map[string]any{}, nil
	}
	top, ok := normalize(doc).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the top level must be a table of settings, not a %T", doc)
	}
	return top, nil
}

// jsonError adds the line and column to a JSON syntax error.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	line, col := 1, 1
	for _, b := range data[:min(int(se.Offset), len(data))] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, err)
}

// normalize turns decoded values into JSON-like ones.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case int:
		return int64(x)
	case uint64:
		return float64(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	default:
		return v
	}
}

// Settings resolves a script's parameters: for each key of defaults, the
// environment variable of the key in upper case wins, then the key in the
// file's settings, then the default. Values from the environment are
// strings, converted to the default's kind: a number, a boolean, or a list
// ("1,2,4" for [1, 2, 4]). The file's values take the default's kind too:
// a list may be written as a list or as the same "1,2,4" string, a number
// or a boolean as itself or as a string of one, and a single number stands
// for a list of one. A key whose default is nil takes the string or the
// file's value as it is. Errors name the variable or the file's key.
func Settings(defaults, file map[string]any, env map[string]string) (map[string]any, error) {
	out := make(map[string]any, len(defaults))
	for key, def := range defaults {
		raw, fromEnv := env[strings.ToUpper(key)]
		switch {
		case fromEnv && raw != "":
			v, err := convert(raw, def)
			if err != nil {
				return nil, fmt.Errorf("%s=%q: %w", strings.ToUpper(key), raw, err)
			}
			out[key] = v
		case file[key] != nil:
			v, err := coerce(file[key], def)
			if err != nil {
				return nil, fmt.Errorf("the configuration file's %s: %w", key, err)
			}
			out[key] = v
		default:
			out[key] = def
		}
	}
	return out, nil
}

// coerce reads a value of a configuration file as the kind of def: a
// string as the environment's would be read, a single number as a list of
// one where def is a list; a value of another kind than def's is an error.
func coerce(v, def any) (any, error) {
	if s, ok := v.(string); ok {
		return convert(s, def)
	}
	switch d := def.(type) {
	case float64, int64:
		if !isNumber(v) {
			return nil, fmt.Errorf("want a number, got %s", kindOf(v))
		}
	case bool:
		if _, ok := v.(bool); !ok {
			return nil, fmt.Errorf("want true or false, got %s", kindOf(v))
		}
	case []any:
		switch x := v.(type) {
		case []any:
			if len(d) == 0 || isNumber(d[0]) {
				for i, e := range x {
					if !isNumber(e) {
						return nil, fmt.Errorf("want a list of numbers; item %d is %s", i+1, kindOf(e))
					}
				}
			}
		case float64, int64:
			return []any{x}, nil
		default:
			return nil, fmt.Errorf("want a list, such as [1, 2, 4] or \"1,2,4\", got %s", kindOf(v))
		}
	}
	return v, nil
}

// kindOf names the kind of a decoded value for an error message.
func kindOf(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case float64, int64:
		return fmt.Sprintf("the number %v", x)
	case bool:
		return fmt.Sprintf("%t", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// convert reads an environment value as the kind of def.
func convert(raw string, def any) (any, error) {
	switch d := def.(type) {
	case float64, int64:
		n, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil {
			return nil, errors.New("want a number")
		}
		return n, nil
	case bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return nil, errors.New("want true or false")
		}
		return b, nil
	case []any:
		parts := strings.Split(raw, ",")
		list := make([]any, len(parts))
		numeric := len(d) == 0 || isNumber(d[0])
		for i, p := range parts {
			p = strings.TrimSpace(p)
			list[i] = p
			if numeric {
				n, err := strconv.ParseFloat(p, 64)
				if err != nil {
					return nil, fmt.Errorf("want a comma-separated list of numbers; %q is not one", p)
				}
				list[i] = n
			}
		}
		return list, nil
	default:
		return raw, nil
	}
}

func isNumber(v any) bool {
	switch v.(type) {
	case float64, int64:
		return true
	}
	return false
}
