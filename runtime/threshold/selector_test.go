package threshold

import "testing"

func TestParseSelector(t *testing.T) {
	tests := []struct {
		key, name, tags string // tags as TagSet.Key()
	}{
		{"llm_ttft", "llm_ttft", ""},
		{"  llm_ttft  ", "llm_ttft", ""},
		{"http.req_duration", "http.req_duration", ""},
		{"llm_ttft{scenario:chat}", "llm_ttft", "scenario:chat"},
		{"llm_ttft { scenario : chat }", "llm_ttft", "scenario:chat"},
		{"llm_ttft{scenario:chat,model:llama}", "llm_ttft", "model:llama,scenario:chat"},
		{"llm_ttft{ scenario:chat , model : llama }", "llm_ttft", "model:llama,scenario:chat"},
		// group paths start with "::"; values keep every ':' after the first
		{"llm_ttft{group:::chat}", "llm_ttft", "group:::chat"},
		{"llm_ttft{group:::chat::rag}", "llm_ttft", "group:::chat::rag"},
		{"llm_ttft{ group : ::chat }", "llm_ttft", "group:::chat"},
		{"llm_ttft{url:http://host:8000/v1}", "llm_ttft", "url:http://host:8000/v1"},
		// spaces inside a value are kept; one pair of quotes is removed
		{"checks{check:full answer}", "checks", "check:full answer"},
		{`checks{check:"full answer"}`, "checks", "check:full answer"},
		{`checks{'check':'ok'}`, "checks", "check:ok"},
		{`checks{check:"ok'}`, "checks", `check:"ok'`},
	}
	for _, tt := range tests {
		name, tags, err := ParseSelector(tt.key)
		if err != nil {
			t.Errorf("ParseSelector(%q): %v", tt.key, err)
			continue
		}
		if name != tt.name || tags.Key() != tt.tags {
			t.Errorf("ParseSelector(%q) = %q, %q; want %q, %q", tt.key, name, tags.Key(), tt.name, tt.tags)
		}
	}
}

func TestParseSelectorErrors(t *testing.T) {
	tests := []struct{ key, err string }{
		{"", "missing metric name: want name or name{tag:value}"},
		{"{scenario:chat}", "missing metric name: want name or name{tag:value}"},
		{"llm-ttft", `invalid metric name "llm-ttft": use letters, digits, '_' and '.', starting with a letter or '_', at most 128 characters`},
		{"9lives", `invalid metric name "9lives": use letters, digits, '_' and '.', starting with a letter or '_', at most 128 characters`},
		{"llm ttft", `invalid metric name "llm ttft": use letters, digits, '_' and '.', starting with a letter or '_', at most 128 characters`},
		{"llm_ttft}", `invalid metric name "llm_ttft}": use letters, digits, '_' and '.', starting with a letter or '_', at most 128 characters`},
		{"llm_ttft{scenario:chat", `the tag selector of "llm_ttft{scenario:chat" does not end with '}': want name{tag:value}`},
		{"llm_ttft{scenario:chat}x", `the tag selector of "llm_ttft{scenario:chat}x" does not end with '}': want name{tag:value}`},
		{"llm_ttft{a:{b}}", `stray brace in the tag selector of "llm_ttft{a:{b}}": want name{tag:value}`},
		{"llm_ttft{}", "empty tag selector {}: name tags, like {scenario:chat}, or leave the braces out"},
		{"llm_ttft{  }", "empty tag selector {}: name tags, like {scenario:chat}, or leave the braces out"},
		{"llm_ttft{scenario}", `tag "scenario" has no value: want {scenario:value}`},
		{"llm_ttft{scenario=chat}", `tag "scenario=chat" has no value: want {scenario=chat:value}`},
		{"llm_ttft{scenario:chat,}", "empty tag in {scenario:chat,}: want {tag:value,tag2:value2}"},
		{"llm_ttft{,scenario:chat}", "empty tag in {,scenario:chat}: want {tag:value,tag2:value2}"},
		{"llm_ttft{:chat}", "empty tag name in {:chat}: want {tag:value}"},
		{"llm_ttft{scenario:}", `tag "scenario" has an empty value: want {scenario:value}`},
		{`llm_ttft{scenario:""}`, `tag "scenario" has an empty value: want {scenario:value}`},
		{"llm_ttft{scenario:chat,scenario:rag}", `tag "scenario" appears twice in {scenario:chat,scenario:rag}`},
	}
	for _, tt := range tests {
		_, _, err := ParseSelector(tt.key)
		if err == nil {
			t.Errorf("ParseSelector(%q): no error, want %q", tt.key, tt.err)
			continue
		}
		if err.Error() != tt.err {
			t.Errorf("ParseSelector(%q):\n got %s\nwant %s", tt.key, err, tt.err)
		}
	}
}
