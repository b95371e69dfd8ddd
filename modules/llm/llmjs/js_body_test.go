package llmjs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// exportBody gives what rt.ExportTo(obj, &map[string]any) gives, for
// every kind of object a script may pass as a body, runs its getters as
// many times, and refuses what ExportTo refuses, with its error.
func TestExportBodyIsExportTo(t *testing.T) {
	bodies := []string{
		`({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, ignore_eos: true, temperature: 0.5 })`,
		`({})`,
		`({ a: undefined, b: null, c: [1, , 3], d: new Date(0), e: { f: [[]] }, g: 2n ** 70n, h: NaN })`,
		`(() => { const o = Object.create({ inherited: 1 }); o.own = 2; Object.defineProperty(o, 'hidden', { value: 3 }); o[Symbol('s')] = 4; return o })()`,
		`new (class Body { constructor() { this.prompt = 'p' } method() {} })()`,
		`(() => { globalThis.gets = 0; return { get prompt() { gets++; return 'p' }, nested: { get n() { gets++; return 1 } } } })()`,
		`[1, 2]`,
		`new Date(0)`,
		`new Map([['a', 1]])`,
		`(function () {})`,
		`new Proxy({ prompt: 'p' }, {})`,
		`Object.freeze({ prompt: 'p', list: Object.freeze(['a']) })`,
		`new Uint8Array([1, 2])`,
	}
	for _, src := range bodies {
		t.Run(src, func(t *testing.T) {
			export := func(f func(rt *goja.Runtime, obj *goja.Object) map[string]any) (body map[string]any, gets int64, err error) {
				rt := goja.New()
				v, err := rt.RunString(src)
				if err != nil {
					t.Fatal(err)
				}
				obj := v.(*goja.Object)
				if ex := rt.Try(func() { body = f(rt, obj) }); ex != nil {
					err = ex
				}
				if g := rt.Get("gets"); g != nil {
					gets = g.ToInteger()
				}
				return body, gets, err
			}
			got, gotGets, gotErr := export(exportBody)
			want, wantGets, wantErr := export(func(rt *goja.Runtime, obj *goja.Object) map[string]any {
				var body map[string]any
				if err := rt.ExportTo(obj, &body); err != nil {
					panic(rt.NewTypeError("llm.stream(body): %v", err))
				}
				return body
			})
			if strings.Contains(src, "gets++") && wantGets != 2 {
				t.Errorf("ExportTo ran the getters %d times, want 2", wantGets)
			}
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) || gotGets != wantGets || (gotErr == nil) != (wantErr == nil) ||
				gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Errorf("got %#v (%d getter calls, error %v)\nwant %#v (%d getter calls, error %v)", got, gotGets, gotErr, want, wantGets, wantErr)
			}
		})
	}
}
