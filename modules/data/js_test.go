package data

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/internal/tokenizer"
	"github.com/llmrun/llmrun/internal/tokenizer/hfhub/hfhubtest"
	"github.com/llmrun/llmrun/modules/modulestest"
	"github.com/llmrun/llmrun/modules/scriptpath"
)

// newDataVU returns VU number n with the module m exposed as the global
// data.
func newDataVU(t testing.TB, m *Module, n int64) *modulestest.VU {
	t.Helper()
	vu := modulestest.NewVU(t)
	vu.Number = n
	vu.Expose("data", m)
	return vu
}

// runErr runs src and returns the message of the exception it throws, or
// "" when it throws none.
func runErr(vu *modulestest.VU, src string) string {
	_, err := vu.Runtime().RunString(src)
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestJSTokenizer(t *testing.T) {
	vu := newDataVU(t, &Module{Seed: 1}, 1)
	got := vu.Run(`
		const tok = data.tokenizer('o200k_base');
		const ids = tok.encode('Hello, world! Hello again.');
		JSON.stringify({ name: tok.name, n: tok.count('Hello, world! Hello again.'), len: ids.length,
		                 back: tok.decode(ids), def: data.tokenizer().name });
	`).String()
	want := `{"name":"o200k_base","n":7,"len":7,"back":"Hello, world! Hello again.","def":"cl100k_base"}`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if msg := runErr(vu, `data.tokenizer('no-such-tokenizer.json')`); !strings.Contains(msg, `unknown tokenizer "no-such-tokenizer.json"`) || !strings.Contains(msg, "no such file: looked for no-such-tokenizer.json") {
		t.Errorf("a missing tokenizer file: %q", msg)
	}
}

// TestJSSyntheticIsExact re-encodes prompts of the lengths a log-normal
// draws, in JavaScript, under the module's default and an explicit
// tokenizer.
func TestJSSyntheticIsExact(t *testing.T) {
	vu := newDataVU(t, &Module{Seed: 3, Tokenizer: "o200k_base"}, 1)
	got := vu.Run(`
		const len = data.lengths.lognormal({ mean: 512, sigma: 0.8, min: 32, max: 8192 });
		const o200k = data.tokenizer(), cl100k = data.tokenizer('cl100k_base');
		let bad = [];
		for (let i = 0; i < 50; i++) {
			const n = len.sample();
			const a = data.prompts.synthetic(n);
			const b = data.prompts.synthetic(n, { tokenizer: 'cl100k_base', prefix: 'System: be brief.' });
			if (o200k.count(a) !== n) bad.push('o200k ' + n + ' → ' + o200k.count(a));
			if (cl100k.count(b) !== n || !b.startsWith('System: be brief.')) bad.push('cl100k ' + n + ' → ' + cl100k.count(b));
		}
		bad.join('; ');
	`).String()
	if got != "" {
		t.Error(got)
	}
}

// TestJSStreamsPerVU: two VUs of one run draw different lengths and
// prompts; the same VU number under the same seed draws the same ones;
// another seed draws others.
func TestJSStreamsPerVU(t *testing.T) {
	const src = `
		const len = data.lengths.uniform({ min: 1, max: 1000000 });
		const xs = [];
		for (let i = 0; i < 8; i++) xs.push(len.sample());
		xs.join(',') + '|' + data.prompts.synthetic(12);
	`
	draw := func(seed, vuNum int64) string {
		return newDataVU(t, &Module{Seed: seed}, vuNum).Run(src).String()
	}
	a1, a1again, a2, b1 := draw(1, 1), draw(1, 1), draw(1, 2), draw(2, 1)
	if a1 != a1again {
		t.Errorf("seed 1, VU 1 drew %q then %q", a1, a1again)
	}
	if a1 == a2 || a1 == b1 {
		t.Errorf("VU 1 %q, VU 2 %q, seed 2 %q: streams are not independent", a1, a2, b1)
	}
}

func TestJSLengthOptionErrors(t *testing.T) {
	vu := newDataVU(t, &Module{Seed: 1}, 1)
	for _, tc := range []struct{ src, want string }{
		{`data.lengths.lognormal({ mean: 512, sd: 0.8 })`, `unknown option "sd" (known: mean, median, sigma, min, max)`},
		{`data.lengths.lognormal({ mean: 512 })`, `sigma is required`},
		{`data.lengths.lognormal({ mean: 512, median: 300, sigma: 1 })`, `give mean or median, not both`},
		{`data.lengths.lognormal({ mean: -5, sigma: 1 })`, `lognormal: mean must be a positive number`},
		{`data.lengths.uniform({ min: 10, max: 5 })`, `uniform: max (5) must be ≥ min (10)`},
		{`data.lengths.uniform({ min: 10 })`, `max is required`},
		{`data.lengths.normal({ mean: 10, stddev: 2, min: 1.5 })`, `min: want a whole number ≥ 0, got 1.5`},
		{`data.lengths.fixed(-1)`, `want a whole number ≥ 0`},
		{`data.lengths.empirical([])`, `want a non-empty array`},
		{`data.prompts.synthetic('many')`, `prompts.synthetic(n): want a whole number`},
		{`data.prompts.synthetic(10, { prefx: 'a' })`, `unknown option "prefx"`},
		{`data.prompts.synthetic(2, { prefix: 'a much longer prefix than two tokens' })`, `the prefix alone has`},
		{`data.prompts.sharedPrefix({ groups: 2 })`, `prefixTokens is required`},
		{`data.prompts.sharedPrefix({ groups: 2, prefixTokens: 8 }).prompt(4, 2)`, `group 2 does not exist (there are 2, from 0)`},
	} {
		if msg := runErr(vu, tc.src); !strings.Contains(msg, tc.want) {
			t.Errorf("%s\n  threw %q\n  want it to contain %q", tc.src, msg, tc.want)
		}
	}
	if got := vu.Run(`String(data.lengths.lognormal({ median: 300, sigma: 0.5 }))`).String(); !strings.HasPrefix(got, "lognormal(mean=339.9,") {
		t.Errorf("a log-normal given its median describes itself as %q", got)
	}
}

// TestJSSharedPrefix: every VU of a run gets the same prefixes; prompts
// have the prefix, a suffix, and exactly the tokens they claim.
func TestJSSharedPrefix(t *testing.T) {
	m := &Module{Seed: 9}
	const src = `
		const g = data.prompts.sharedPrefix({ groups: 4, prefixTokens: 300 });
		const tok = data.tokenizer();
		const out = { prefixes: g.prefixes, bad: [] , groups: {} };
		for (let i = 0; i < 40; i++) {
			const p = g.prompt(50);
			out.groups[p.group] = true;
			if (p.text !== p.prefix + ' ' + p.suffix || p.prefix !== g.prefixes[p.group]) out.bad.push('layout');
			if (tok.count(p.text) !== 350 || p.tokens !== 350 || tok.count(p.prefix) !== 300) out.bad.push('count ' + tok.count(p.text));
		}
		out;
	`
	type result struct {
		Prefixes []string        `js:"prefixes"`
		Bad      []string        `js:"bad"`
		Groups   map[string]bool `js:"groups"`
	}
	var r1, r2 result
	for vuNum, r := range map[int64]*result{1: &r1, 2: &r2} {
		vu := newDataVU(t, m, vuNum)
		if err := vu.Runtime().ExportTo(vu.Run(src), r); err != nil {
			t.Fatal(err)
		}
	}
	if len(r1.Bad) > 0 || len(r2.Bad) > 0 {
		t.Errorf("bad prompts: %v %v", r1.Bad, r2.Bad)
	}
	if strings.Join(r1.Prefixes, "|") != strings.Join(r2.Prefixes, "|") || len(r1.Prefixes) != 4 {
		t.Errorf("VUs 1 and 2 got different prefixes")
	}
	if len(r1.Groups) != 4 {
		t.Errorf("40 prompts drew groups %v, want all 4", r1.Groups)
	}
	if r1.Prefixes[0] == r1.Prefixes[1] {
		t.Error("groups 0 and 1 share their prefix")
	}
}

func TestJSDataset(t *testing.T) {
	var read []string
	paths := scriptpath.New(scriptpath.Config{Script: "testdata/datasets/script.js", FileRead: func(path string) { read = append(read, path) }})
	m := &Module{Seed: 1, Paths: paths}
	vu := newDataVU(t, m, 1)
	got := vu.Run(`
		const ds = data.dataset('sharegpt.json');
		const r = ds.get(0);
		const tok = data.tokenizer();
		const seen = {};
		for (let i = 0; i < ds.length; i++) seen[ds.next().index] = true;
		JSON.stringify({ format: ds.format, length: ds.length, skipped: ds.skipped, walked: Object.keys(seen).length,
			first: { id: r.id, role: r.messages[0].role, exact: r.promptTokens === tok.count(r.prompt),
			         out: r.outputTokens === tok.count(r.completion) } });
	`).String()
	if !strings.Contains(got, `"format":"sharegpt"`) || !strings.Contains(got, `"exact":true`) || !strings.Contains(got, `"out":true`) {
		t.Errorf("dataset: %s", got)
	}
	var d struct{ Length, Walked int }
	if _, err := fmt.Sscanf(strings.ReplaceAll(got[strings.Index(got, `"length":`):], `"`, ""), "length:%d,", &d.Length); err != nil || d.Length < 2 {
		t.Fatalf("dataset length in %s: %v", got, err)
	}
	if !strings.Contains(got, fmt.Sprintf(`"walked":%d`, d.Length)) {
		t.Errorf("next() did not visit every record once in %d calls: %s", d.Length, got)
	}

	if msg := runErr(vu, `data.dataset('missing.jsonl')`); !strings.Contains(msg, "no such file: looked for testdata/datasets/missing.jsonl (relative to the script's directory) and missing.jsonl") {
		t.Errorf("missing file: %q", msg)
	}
	// The file the script read, once; not the one it did not find.
	if want := []string{"testdata/datasets/sharegpt.json"}; !slices.Equal(read, want) {
		t.Errorf("FileRead told %q, want %q", read, want)
	}
	if msg := runErr(vu, `data.dataset('prompts.jsonl', { format: 'yaml' })`); !strings.Contains(msg, `unknown dataset format "yaml"`) {
		t.Errorf("unknown format: %q", msg)
	}
	vu.LeaveInit()
	if msg := runErr(vu, `data.dataset('prompts.jsonl')`); !strings.Contains(msg, "loaded in init code") {
		t.Errorf("dataset() in an iteration: %q", msg)
	}
	if got := vu.Run(`
		const e = data.lengths.empirical(ds, 'output');
		let ok = true;
		for (let i = 0; i < 50; i++) { const n = e.sample(); if (!(n >= 0)) ok = false; }
		ok && String(e) === 'empirical(dataset)';
	`); !got.ToBoolean() {
		t.Error("empirical lengths of a dataset")
	}
}

// TestJSDatasetSharedAcrossVUs gives 1,000 VUs (real goja runtimes, each
// running the module's init code) one dataset of several megabytes: they
// all hold the same records, and the memory they take beyond empty VUs is
// a small fraction of one copy per VU.
func TestJSDatasetSharedAcrossVUs(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 runtimes: TestJSDataset covers a dataset read in VUs; only the memory of sharing it among 1,000 is left out")
	}
	path := filepath.Join(t.TempDir(), "big.jsonl")
	var b strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&b, `{"id": "r%d", "prompt": "%s", "output_tokens": %d}`+"\n", i, strings.Repeat("lorem ipsum dolor ", 15), 100+i%50)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	size := b.Len()

	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	const vus = 1000
	newVUs := func(m *Module, src string) []*modulestest.VU {
		out := make([]*modulestest.VU, vus)
		for i := range out {
			out[i] = newDataVU(t, m, int64(i+1))
			out[i].Run(src)
		}
		return out
	}
	base := heap()
	empty := newVUs(&Module{Seed: 1}, `const x = 1;`)
	emptyBytes := heap() - base

	m := &Module{Seed: 1}
	base = heap()
	loaded := newVUs(m, fmt.Sprintf(`const ds = data.dataset(%q); const first = ds.get(0).prompt;`, path))
	loadedBytes := heap() - base

	ds, err := m.datasets.Open(t.Context(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, vu := range loaded {
		ref, ok := vu.Runtime().Get("ds").ToObject(vu.Runtime()).Get(datasetHandle).Export().(*datasetRef)
		if !ok || ref.ds != ds {
			t.Fatalf("VU %d holds another dataset", vu.ID())
		}
	}
	perVU := (float64(loadedBytes) - float64(emptyBytes)) / vus
	t.Logf("dataset file %d bytes; VUs: %d B each empty, %d B each with the dataset: %+.0f B per VU for the dataset (one copy would be ≥ %d B)",
		size, emptyBytes/vus, loadedBytes/vus, perVU, size)
	if perVU > float64(size)/20 {
		t.Errorf("each VU takes %.0f B more with a %d B dataset: it is copied, not shared", perVU, size)
	}
	runtime.KeepAlive(empty)
	runtime.KeepAlive(loaded)
}

// BenchmarkSynthetic measures prompts.synthetic's cost per token from
// JavaScript: what a script pays for an exact-length prompt.
func BenchmarkSynthetic(b *testing.B) {
	vu := newDataVU(b, &Module{Seed: 1}, 1)
	fn, ok := goja.AssertFunction(vu.Run(`(n) => data.prompts.synthetic(n)`))
	if !ok {
		b.Fatal("not a function")
	}
	const n = 2048
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fn(goja.Undefined(), vu.Runtime().ToValue(n)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/token")
}

// The run's default tokenizer (--tokenizer FILE) is a path of the
// command line's: the working directory's, as the llm module's client
// reads it, even when the script's directory holds a file of that name;
// a tokenizer the script names is found beside the script.
func TestJSDefaultTokenizerIsTheWorkingDirectorys(t *testing.T) {
	tokenizerJSON, err := os.ReadFile("../../internal/tokenizer/testdata/hf/sentencepiece.json")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	work, project := filepath.Join(root, "work"), filepath.Join(root, "project")
	for dir, content := range map[string]string{work: string(tokenizerJSON), project: "not a tokenizer"} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tok.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work)
	paths := scriptpath.New(scriptpath.Config{Script: filepath.Join(project, "bench.js")})
	vu := newDataVU(t, &Module{Seed: 1, Tokenizer: "tok.json", Paths: paths}, 1)
	if msg := runErr(vu, `data.tokenizer().count('hello')`); msg != "" {
		t.Errorf("the default tokenizer: %s", msg)
	}
	if msg := runErr(vu, `data.tokenizer('tok.json')`); !strings.Contains(msg, filepath.Join(project, "tok.json")) {
		t.Errorf("the script's tok.json: error %q, want the one beside the script, which is no tokenizer", msg)
	}
}

// A tokenizer downloaded from the hub stops with the VU: a stopped VU's
// data.tokenizer() returns at once with its cancellation.
func TestJSTokenizerDownloadStopsWithTheVU(t *testing.T) {
	arrived := hfhubtest.StalledHub(t)
	vu := newDataVU(t, &Module{Seed: 1}, 1)
	ctx, stop := context.WithCancel(t.Context())
	vu.Ctx = ctx
	go func() {
		<-arrived
		stop()
	}()
	if msg := runErr(vu, `data.tokenizer('data-js-test/stalled')`); !strings.Contains(msg, "context canceled") {
		t.Errorf("error %q, want the VU's cancellation", msg)
	}
}

// TestJSNumberedDraws: a text drawn with { draw: i } depends on the seed
// and i alone, not on the VU that draws it nor on what it drew before, so
// that a benchmark numbering its requests sends the same prompts in every
// run of a seed however its VUs shared them.
func TestJSNumberedDraws(t *testing.T) {
	const src = `
		const g = data.prompts.sharedPrefix({ groups: 2, prefixTokens: 5 });
		const skip = %d;
		for (let i = 0; i < skip; i++) data.prompts.synthetic(7);
		[data.prompts.synthetic(12, { draw: 3 }), g.prompt(6, 1, { draw: 3 }).text].join('|');
	`
	draw := func(seed, vuNum int64, skip int) string {
		return newDataVU(t, &Module{Seed: seed}, vuNum).Run(fmt.Sprintf(src, skip)).String()
	}
	a := draw(1, 1, 0)
	for _, other := range []struct {
		vu   int64
		skip int
	}{{2, 0}, {1, 5}, {7, 2}} {
		if got := draw(1, other.vu, other.skip); got != a {
			t.Errorf("VU %d after %d draws: %q, VU 1 first: %q", other.vu, other.skip, got, a)
		}
	}
	if b := draw(2, 1, 0); b == a {
		t.Errorf("seeds 1 and 2 drew the same %q", a)
	}
	if msg := runErr(newDataVU(t, &Module{Seed: 1}, 1), `data.prompts.synthetic(3, { draw: -1 })`); !strings.Contains(msg, "draw") {
		t.Errorf("draw -1: %q", msg)
	}
}

// TestJSFromHashIds builds two records' prompts in JavaScript, one VU
// each: they share the hash ids' blocks whichever VU builds them, have
// their exact lengths, and differ after the shared blocks.
func TestJSFromHashIds(t *testing.T) {
	m := &Module{Seed: 5}
	a := newDataVU(t, m, 1).Run(`JSON.stringify(data.prompts.fromHashIds({ hashIds: [7, 8], inputTokens: 40, blockSize: 16, request: 0 }))`).String()
	b := newDataVU(t, m, 2).Run(`JSON.stringify(data.prompts.fromHashIds({ hashIds: [7, 8, 9], inputTokens: 50, blockSize: 16, request: 1 }))`).String()
	var pa, pb struct {
		Text                 string
		Tokens, HashedTokens int
	}
	if err := json.Unmarshal([]byte(a), &pa); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &pb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	tok, err := tokenizer.Load(tokenizer.DefaultEncoding)
	if err != nil {
		t.Fatal(err)
	}
	ia, _ := tok.Encode(pa.Text)
	ib, _ := tok.Encode(pb.Text)
	if len(ia) != 40 || pa.Tokens != 40 || pa.HashedTokens != 32 || len(ib) != 50 || pb.HashedTokens != 48 {
		t.Fatalf("lengths %d (%d, %d hashed) and %d (%d hashed); want 40 (32 hashed) and 50 (48)", len(ia), pa.Tokens, pa.HashedTokens, len(ib), pb.HashedTokens)
	}
	if n := commonPrefix(ia, ib); n != 32 {
		t.Errorf("the two prompts share %d leading tokens, want the 32 of hash ids 7 and 8", n)
	}
	// A trace-replay iteration's record, its index the request's number,
	// and the options apart.
	got := newDataVU(t, m, 3).Run(`
		const record = (i) => ({ index: i, start: 0, inputTokens: 40, outputTokens: 8, hashIds: [7, 8], fields: { user: 'u1' } });
		const build = (i) => data.prompts.fromHashIds(record(i), { blockSize: 16 }).text;
		const four = build(4), other = build(5);
		JSON.stringify({ same: four === build(4), differs: four !== other, sharesBlocks: other.startsWith(four.slice(0, 60)) });
	`).String()
	if got != `{"same":true,"differs":true,"sharesBlocks":true}` {
		t.Errorf("records: %s; want the same prompt for the same index, and the same blocks but another tail for another", got)
	}
	vu := newDataVU(t, m, 3)
	for src, want := range map[string]string{
		`data.prompts.fromHashIds({ hashIds: [1] })`:                                "inputTokens is required",
		`data.prompts.fromHashIds({ hashIds: [1.5], inputTokens: 3 })`:              "hashIds[0] must be a whole number",
		`data.prompts.fromHashIds({ hashIds: 'x', inputTokens: 3 })`:                "hashIds must be an array",
		`data.prompts.fromHashIds({ hashIds: [1], inputTokens: 3, blockSize: 0 })`:  "block size must be ≥ 1",
		`data.prompts.fromHashIds({ hashIds: [1], inputTokens: 3, blocksize: 16 })`: `unknown option "blocksize"`,
	} {
		if msg := runErr(vu, src); !strings.Contains(msg, want) {
			t.Errorf("%s: error %q, want one saying %q", src, msg, want)
		}
	}
}

// TestJSFromHashIdsCountsExpectedHits: in iterations, each prompt built
// from hash ids adds to the run's expected hits, shared by every VU, and
// to the module's two counters; in init code it counts nothing.
func TestJSFromHashIdsCountsExpectedHits(t *testing.T) {
	m := &Module{Seed: 5}
	a, b := newDataVU(t, m, 1), newDataVU(t, m, 2)
	build := `data.prompts.fromHashIds({ hashIds: [1, 2], inputTokens: 40, blockSize: 16 }).expectedCachedTokens`
	if got := a.Run(build).ToInteger(); got != 0 {
		t.Errorf("init code: %d expected cached tokens, want 0 (nothing counted)", got)
	}
	a.LeaveInit()
	b.LeaveInit()
	for i, c := range []struct {
		vu   *modulestest.VU
		want int64
	}{{a, 0}, {b, 32}, {a, 32}} {
		if got := c.vu.Run(build).ToInteger(); got != c.want {
			t.Errorf("prompt %d: %d expected cached tokens, want %d", i, got, c.want)
		}
	}
	for _, c := range []struct {
		metric string
		want   float64
	}{{HashInputTokensMetric, 80}, {ExpectedCachedTokensMetric, 32}} {
		if st := a.Stats(c.metric); st == nil || st.Sum != c.want {
			t.Errorf("VU 1's %s: %+v, want a sum of %v", c.metric, st, c.want)
		}
	}
}
