package llmjs

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules/llm"
)

// jsShape is how the values of one Go struct type become JavaScript
// objects, computed once per type from its fields' tags (see Result): one
// property per exported field, in field order, named by its json tag.
// Values map by kind: booleans, numbers and strings (named string types
// such as ErrorClass included) to primitives, structs to objects of their
// own shape, slices to arrays (empty when nil), maps to objects (left out
// when nil).
type jsShape struct {
	props []jsProp
}

// jsProp is one property of a jsShape.
type jsProp struct {
	name  string
	index int
	// optional leaves the property out unless the caller asks for the
	// optional ones (js:",optional").
	optional bool
	// ifField is the index of the field whose zero value leaves the
	// property out (js:",if=Field"); -1 for none.
	ifField int
	// elem is the shape of a struct field, or of a slice's or map's
	// struct elements.
	elem *jsShape
}

// resultShape is the shape of the objects llm.stream() returns.
var resultShape = newJSShape(reflect.TypeFor[llm.Result]())

// jsResults builds the objects llm.stream() returns in one runtime (a
// VU's). It keeps the string and whole-number values it made, since a
// result's mostly repeat from one request to the next (its API, model,
// protocol, token source, finish reason, prompt length): goja's
// primitives are immutable, so one value serves every object, where
// making it again would cost two allocations (the boxing for ToValue,
// then goja's own). Its zero value is ready to use.
type jsResults struct {
	strings map[string]goja.Value
	ints    map[int64]goja.Value
}

const (
	// maxCachedString is the longest string jsResults keeps: longer ones
	// (an error message, a text) seldom repeat.
	maxCachedString = 64
	// maxCachedValues bounds each of jsResults' caches; a full cache
	// starts again empty.
	maxCachedValues = 256
)

// object converts r to the object scripts see; the ITL gaps
// (js:",optional") only when withITL.
func (c *jsResults) object(rt *goja.Runtime, r *llm.Result, withITL bool) *goja.Object {
	return resultShape.object(c, rt, reflect.ValueOf(r).Elem(), withITL)
}

// string returns s as a value of rt, kept when short.
func (c *jsResults) string(rt *goja.Runtime, s string) goja.Value {
	if len(s) > maxCachedString {
		return rt.ToValue(s)
	}
	return keptValue(&c.strings, rt, s)
}

// int returns n as a value of rt, kept unless goja makes it without
// allocating (0 to 255).
func (c *jsResults) int(rt *goja.Runtime, n int64) goja.Value {
	if n >= 0 && n < 256 {
		return rt.ToValue(n)
	}
	return keptValue(&c.ints, rt, n)
}

// keptValue returns x as a value of rt, from cache or made and kept there.
func keptValue[K string | int64](cache *map[K]goja.Value, rt *goja.Runtime, x K) goja.Value {
	if v, ok := (*cache)[x]; ok {
		return v
	}
	if *cache == nil || len(*cache) >= maxCachedValues {
		// Sized as it fills: a VU's results mostly repeat a handful of
		// values, and a map made for all maxCachedValues would hold some
		// 6 KB in each of 10,000 VUs.
		*cache = make(map[K]goja.Value)
	}
	v := rt.ToValue(x)
	(*cache)[x] = v
	return v
}

// newJSShape computes the shape of struct type t. A field of a kind it
// cannot map is a programming error: it panics, at package
// initialization.
func newJSShape(t reflect.Type) *jsShape {
	s := &jsShape{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		jsName, jsOpts, _ := strings.Cut(f.Tag.Get("js"), ",")
		if !f.IsExported() || name == "-" || jsName == "-" {
			continue
		}
		if jsName != "" {
			panic(fmt.Sprintf("llm: %s.%s: a js tag renames nothing here (the json name is the script's); only js:\"-\" and options", t, f.Name))
		}
		if name == "" {
			panic(fmt.Sprintf("llm: %s.%s has no json name for scripts", t, f.Name))
		}
		p := jsProp{name: name, index: i, ifField: -1, elem: elemShape(t, f)}
		for opt := range strings.SplitSeq(jsOpts, ",") {
			switch field, isIf := strings.CutPrefix(opt, "if="); {
			case opt == "":
			case opt == "optional":
				p.optional = true
			case isIf:
				g, ok := t.FieldByName(field)
				if !ok || len(g.Index) != 1 {
					panic(fmt.Sprintf("llm: %s.%s: js:\"if=%s\" names no field of %s", t, f.Name, field, t))
				}
				p.ifField = g.Index[0]
			default:
				panic(fmt.Sprintf("llm: %s.%s: unknown js tag option %q", t, f.Name, opt))
			}
		}
		s.props = append(s.props, p)
	}
	return s
}

// elemShape is the shape of field f's structs (f itself, or its elements),
// nil when it holds none; it panics on a kind jsValue cannot map.
func elemShape(t reflect.Type, f reflect.StructField) *jsShape {
	ft := f.Type
	if k := ft.Kind(); k == reflect.Slice || k == reflect.Map {
		if k == reflect.Map && ft.Key().Kind() != reflect.String {
			panic(fmt.Sprintf("llm: %s.%s: a map for scripts needs string keys", t, f.Name))
		}
		ft = ft.Elem()
	}
	switch ft.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64, reflect.String:
		return nil
	case reflect.Struct:
		return newJSShape(ft)
	}
	panic(fmt.Sprintf("llm: %s.%s: scripts cannot be given a %s", t, f.Name, f.Type))
}

// object converts v, a struct of s's type, to a new object of rt with
// c's values; optional says whether to include the optional properties.
func (s *jsShape) object(c *jsResults, rt *goja.Runtime, v reflect.Value, optional bool) *goja.Object {
	return plainObject(rt, func(o *goja.Object) {
		for i := range s.props {
			p := &s.props[i]
			if p.optional && !optional || p.ifField >= 0 && v.Field(p.ifField).IsZero() {
				continue
			}
			f := v.Field(p.index)
			if f.Kind() == reflect.Map && f.IsNil() {
				continue
			}
			must(o.Set(p.name, c.value(rt, f, p.elem, optional)))
		}
	})
}

// value converts v, of a kind newJSShape accepted, whose structs are of
// shape elem.
func (c *jsResults) value(rt *goja.Runtime, v reflect.Value, elem *jsShape, optional bool) goja.Value {
	switch v.Kind() {
	case reflect.Bool:
		return rt.ToValue(v.Bool())
	case reflect.Int, reflect.Int64:
		return c.int(rt, v.Int())
	case reflect.Float64:
		return rt.ToValue(v.Float())
	case reflect.String:
		return c.string(rt, v.String())
	case reflect.Struct:
		return elem.object(c, rt, v, optional)
	case reflect.Slice:
		items := make([]any, v.Len())
		for k := range items {
			items[k] = c.value(rt, v.Index(k), elem, optional)
		}
		return rt.NewArray(items...)
	default: // a map with string keys
		return plainObject(rt, func(o *goja.Object) {
			for it := v.MapRange(); it.Next(); {
				must(o.Set(it.Key().String(), c.value(rt, it.Value(), elem, optional)))
			}
		})
	}
}

// plainObject returns a new object that fill gave its properties while
// it had no prototype, so that no setter the script put on
// Object.prototype ran (defining the properties instead would cost an
// allocation each).
func plainObject(rt *goja.Runtime, fill func(o *goja.Object)) *goja.Object {
	o := rt.NewObject()
	proto := o.Prototype()
	must(o.SetPrototype(nil))
	fill(o)
	must(o.SetPrototype(proto))
	return o
}
