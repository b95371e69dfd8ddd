package llmjs

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/modulestest"
	"github.com/llmrun/llmrun/modules/standard"
)

// The scripting guide, docs/scripting.md, is the one place that documents
// what a script can pass to the llm module and what it gets back. The
// tests below take every name from the code and fail when the guide's
// section for it does not name it in backticks, so that a new option,
// result property or export fails CI until it is documented.

// guidePath is the scripting guide, from this package's directory.
const guidePath = "../../../docs/scripting.md"

// optionsRecorder defines rec(prefix), a Proxy that records, as
// prefix+name, every property the binding reads of it and answers
// undefined: passed as options, it lists the options the binding reads.
const optionsRecorder = `
const read = [];
const rec = (prefix) => new Proxy({}, {
  get(_, k) { if (typeof k === 'string') read.push(prefix + k); return undefined; },
});`

// TestScriptingGuideNamesEveryOption: the guide's sections name every
// option llm.stream(), llm.client() and llm.conversation() read, nested
// ones (tls, retry) by their path, and every property of the objects
// llm.client() and llm.conversation() return.
func TestScriptingGuideNamesEveryOption(t *testing.T) {
	guide := readGuide(t)
	srv := startSim(t)
	m, err := NewModule(llm.Config{BaseURL: srv.URL(), Model: jsModel}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	v := newJSVU(t, m)
	v.Run(optionsRecorder)
	for _, tc := range []struct {
		section string
		// calls are run after read is emptied; read then holds the names.
		calls string
	}{
		{"### Request options", `llm.stream({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }, rec(''))`},
		{"### Clients", `llm.client(rec(''));
			llm.client({ tls: rec('tls.') });
			llm.client({ retry: rec('retry.') });
			llm.client({ retry: { backoff: rec('retry.backoff.') } });
			Object.keys(llm.client()).forEach((k) => read.push('client.' + k))`},
		{"### Conversations", `llm.conversation(rec(''));
			Object.keys(llm.conversation()).forEach((k) => read.push('conversation.' + k))`},
		{"### Sessions", `llm.sessions(rec(''));
			Object.keys(llm.sessions()).forEach((k) => read.push('source.' + k))`},
		{"## The llm module", `Object.keys(llm).forEach((k) => read.push('llm.' + k))`},
	} {
		names := jsStrings(t, v, `read.length = 0; `+tc.calls+`; return read`)
		if len(names) == 0 {
			t.Fatalf("%s: the calls read no name: %s", tc.section, tc.calls)
		}
		checkNamed(t, guide, tc.section, names)
	}
}

// TestScriptingGuideNamesEveryResultProperty: the guide's result section
// names every property of the object llm.stream() returns: every field of
// Result that the one mapping (resultShape) gives scripts, nested ones by
// their path (timings.ttfb, toolCalls[].name), and every property of real
// results of each protocol against the simulator (serverTimings' names
// among them), so that what reaches scripts outside the mapping is
// covered too.
func TestScriptingGuideNamesEveryResultProperty(t *testing.T) {
	guide := readGuide(t)
	names := shapeNames(resultShape, reflect.TypeFor[llm.Result](), "")

	srv := startSim(t)
	m, err := NewModule(llm.Config{BaseURL: srv.URL(), Model: jsModel}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	v := newJSVU(t, m)
	v.Run(`function paths(o, prefix, out) {
	  for (const [k, x] of Object.entries(o)) {
	    out.push(prefix + k);
	    if (Array.isArray(x)) x.forEach((e) => { if (e && typeof e === 'object') paths(e, prefix + k + '[].', out); });
	    else if (x && typeof x === 'object') paths(x, prefix + k + '.', out);
	  }
	  return out;
	}`)
	bodies := map[llm.API]string{
		llm.ChatCompletions: `{ messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }`,
		llm.Completions:     `{ prompt: 'hi', max_tokens: 3 }`,
		llm.OllamaChat:      `{ messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 3 } }`,
		llm.OllamaGenerate:  `{ prompt: 'hi', options: { num_predict: 3 } }`,
		llm.TGI:             `{ inputs: 'hi', parameters: { max_new_tokens: 3 } }`,
		llm.Anthropic:       `{ messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }`,
		llm.Triton:          `{ text_input: 'hi', max_tokens: 3 }`,
		llm.Embeddings:      `{ input: ['a', 'b'] }`,
		llm.Rerank:          `{ query: 'q', documents: ['a', 'b'] }`,
		llm.TEIRerank:       `{ query: 'q', texts: ['a', 'b'] }`,
		llm.Responses:       `{ input: 'hi', max_output_tokens: 3 }`,
	}
	var apis []string
	for _, api := range llm.APIs {
		body, ok := bodies[api]
		if !ok {
			t.Fatalf("no request body for the API %q: add one here, so that its results' properties are checked", api)
		}
		apis = append(apis, string(api))
		expr := `llm.client({ api: '` + string(api) + `', baseURL: '` + srv.URL() + `' }).stream(` + body + `, { text: true, itl: true })`
		if ok := v.Run(`(` + expr + `).ok`).ToBoolean(); !ok {
			t.Fatalf("%s: the request failed: %s", api, v.Run(`JSON.stringify(`+expr+`)`))
		}
		names = append(names, jsStrings(t, v, `return paths(`+expr+`, '', [])`)...)
	}
	checkNamed(t, guide, "### The result", names)
	checkNamed(t, guide, "### Protocols", apis)
}

// TestScriptingGuideNamesEveryExport: each module a script imports has
// a section, "## The NAME module", that names every export (an object's
// own exports by their path: prompts.synthetic).
func TestScriptingGuideNamesEveryExport(t *testing.T) {
	guide := readGuide(t)
	reg := standard.Modules(standard.Options{})
	for _, name := range reg.Names() {
		mod, _ := reg.Lookup(name)
		v := modulestest.NewVU(t)
		v.Expose("mod", mod)
		exports := jsStrings(t, v, `const out = [];
			for (const [k, x] of Object.entries(mod)) {
			  out.push(k);
			  if (x && typeof x === 'object') Object.keys(x).forEach((e) => out.push(k + '.' + e));
			}
			return out`)
		if len(exports) == 0 {
			t.Fatalf("the module %q exports nothing", name)
		}
		checkNamed(t, guide, "## The "+name+" module", exports)
	}
}

func readGuide(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatalf("the scripting guide: %v", err)
	}
	return string(b)
}

// jsStrings runs body, a function body that returns an array of
// strings, in v.
func jsStrings(t *testing.T, v *modulestest.VU, body string) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(v.Run(`JSON.stringify((function () {`+body+`})())`).String()), &out); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return out
}

// shapeNames are the property names of s's objects, made from struct
// type typ, those of nested objects by their path under prefix.
func shapeNames(s *jsShape, typ reflect.Type, prefix string) []string {
	var out []string
	for _, p := range s.props {
		out = append(out, prefix+p.name)
		if p.elem == nil {
			continue
		}
		field := typ.Field(p.index).Type
		switch field.Kind() {
		case reflect.Slice, reflect.Map:
			out = append(out, shapeNames(p.elem, field.Elem(), prefix+p.name+"[].")...)
		default:
			out = append(out, shapeNames(p.elem, field, prefix+p.name+".")...)
		}
	}
	return out
}

// checkNamed fails t for each of names that the guide's section heading
// (up to the next heading of its level or above) does not give in
// backticks, alone or called: `name` or `name(...)`.
func checkNamed(t *testing.T, guide, heading string, names []string) {
	t.Helper()
	section, ok := guideSection(guide, heading)
	if !ok {
		t.Errorf("docs/scripting.md has no section %q", heading)
		return
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if !strings.Contains(section, "`"+name+"`") && !strings.Contains(section, "`"+name+"(") {
			t.Errorf("docs/scripting.md, section %q: does not name `%s`", heading, name)
		}
	}
}

// guideSection is the text under heading, a whole line such as
// "### Clients", up to the next heading of the same level or above;
// lines inside code fences are never headings.
func guideSection(guide, heading string) (string, bool) {
	level := strings.IndexFunc(heading, func(r rune) bool { return r != '#' })
	var b strings.Builder
	in, fenced := false, false
	for line := range strings.Lines(guide) {
		text := strings.TrimRight(line, "\n")
		if strings.HasPrefix(text, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(text, "#") {
			l := strings.IndexFunc(text, func(r rune) bool { return r != '#' })
			switch {
			case text == heading:
				in = true
				continue
			case in && l > 0 && l <= level:
				return b.String(), true
			}
		}
		if in {
			b.WriteString(line)
		}
	}
	return b.String(), in
}
