package threshold

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/llmrun/llmrun/modules/metrics"
)

// metricNameRE is the metrics registry's rule for names, checked here so a
// malformed key fails when the options are parsed, before any metric exists.
var metricNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.]{0,127}$`)

// ParseSelector splits a thresholds key into a metric name and the tag
// filter of a sub-metric: "llm_ttft" is the whole metric (nil filter);
// "llm_ttft{scenario:chat, model:llama}" keeps the series that carry every
// listed tag with that value.
//
// Spaces around the name, the braces, the commas and each tag name and value
// are ignored; spaces inside a value are kept ({check:full answer}). A value
// runs from the first ':' of its tag to the next ',', so it may contain ':'
// — k6's group paths such as {group:::chat} (group "::chat") work — but not
// ','. One pair of matching quotes around a tag name or value is removed
// ({name:"a b"}). An empty selector, a tag without ':', an empty tag name or
// value and a tag listed twice are errors.
func ParseSelector(key string) (name string, tags *metrics.TagSet, err error) {
	s := strings.TrimSpace(key)
	name, sel, hasSel := strings.Cut(s, "{")
	name = strings.TrimSpace(name)
	if name == "" {
		return "", nil, errors.New("missing metric name: want name or name{tag:value}")
	}
	if !metricNameRE.MatchString(name) {
		return "", nil, fmt.Errorf("invalid metric name %q: use letters, digits, '_' and '.', starting with a letter or '_', at most 128 characters", name)
	}
	if !hasSel {
		return name, nil, nil
	}
	inner, ok := strings.CutSuffix(sel, "}")
	if !ok {
		return "", nil, fmt.Errorf("the tag selector of %q does not end with '}': want name{tag:value}", s)
	}
	if strings.ContainsAny(inner, "{}") {
		return "", nil, fmt.Errorf("stray brace in the tag selector of %q: want name{tag:value}", s)
	}
	if strings.TrimSpace(inner) == "" {
		return "", nil, errors.New("empty tag selector {}: name tags, like {scenario:chat}, or leave the braces out")
	}
	m := make(map[string]string)
	for part := range strings.SplitSeq(inner, ",") {
		k, v, ok := strings.Cut(part, ":")
		k = unquote(strings.TrimSpace(k))
		if !ok {
			if k == "" {
				return "", nil, fmt.Errorf("empty tag in {%s}: want {tag:value,tag2:value2}", inner)
			}
			return "", nil, fmt.Errorf("tag %q has no value: want {%s:value}", k, k)
		}
		v = unquote(strings.TrimSpace(v))
		if k == "" {
			return "", nil, fmt.Errorf("empty tag name in {%s}: want {tag:value}", inner)
		}
		if v == "" {
			return "", nil, fmt.Errorf("tag %q has an empty value: want {%s:value}", k, k)
		}
		if _, dup := m[k]; dup {
			return "", nil, fmt.Errorf("tag %q appears twice in {%s}", k, inner)
		}
		m[k] = v
	}
	return name, metrics.NewTagSet(m), nil
}

// unquote removes one pair of matching single or double quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
