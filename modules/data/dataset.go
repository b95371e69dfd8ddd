package data

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmrun/llmrun/internal/tokenizer"

	"github.com/llmrun/llmrun/internal/capped"
)

// Format is a dataset file's format.
type Format string

// The dataset formats.
const (
	// FormatShareGPT is a JSON array of conversations, the layout of
	// ShareGPT_V3_unfiltered_cleaned_split.json:
	// {"id": "...", "conversations": [{"from": "human", "value": "..."}, ...]}.
	// The from values are human or user, gpt or assistant (and the
	// assistants ShareGPT recorded: chatgpt, bing, bard), and system.
	FormatShareGPT Format = "sharegpt"
	// FormatJSONL is one JSON object per line, {"prompt": "..."} or
	// {"messages": [{"role": "user", "content": "..."}, ...]}, with
	// optional "id", "system", "output_tokens" and "completion" fields.
	// Blank lines are skipped.
	FormatJSONL Format = "jsonl"
	// FormatCSV is a header row then one record a row: a "prompt" column,
	// and optional "id", "system", "output_tokens" and "completion"
	// columns; other columns are ignored.
	FormatCSV Format = "csv"
)

// formats are the valid formats, in the order error messages list them.
var formats = []Format{FormatShareGPT, FormatJSONL, FormatCSV}

// The message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string // RoleSystem, RoleUser or RoleAssistant
	Content string
}

// Record is one dataset entry.
type Record struct {
	ID string
	// Messages is the whole conversation; a plain prompt is one user
	// message, after a system message when one is given.
	Messages []Message
	// Prompt is the content of the first user message.
	Prompt string
	// Completion is the record's "completion" field, else the first
	// assistant message after the first user message; "" when none.
	Completion string
	// OutputTokens is the record's own "output_tokens", 0 when absent.
	OutputTokens int
	// Images are the images the record names (a JSONL record's "images",
	// a CSV row's "image"), each a path or a URL, for images.file.
	Images []string
}

// Dataset is a loaded dataset: read-only once loaded, shared by every VU.
type Dataset struct {
	Path    string
	Format  Format
	Records []Record
	// Skipped is the number of records left out: ShareGPT conversations
	// with no user turn.
	Skipped int

	mu     sync.Mutex
	counts map[string]*tokenCounts // by tokenizer name
	caps   datasetCaps
}

// datasetCaps are the bounds of a dataset's parts: defaultCaps but in
// tests.
type datasetCaps struct {
	text   int // the longest text of a record (a message, a completion)
	record int // the longest JSONL line or ShareGPT conversation
}

// defaultCaps are the documented bounds (docs/limits.md).
var defaultCaps = datasetCaps{text: MaxPromptBytes, record: maxRecord}

// tokenCounts caches the token counts of a dataset's records under one
// tokenizer, -1 where not counted yet.
type tokenCounts struct {
	prompt, output []atomic.Int32
}

// maxRecord is the longest JSONL line, and ShareGPT conversation,
// LoadDataset reads.
const maxRecord = 256 << 20

// utf8BOM is the byte order mark some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseFormat returns the format s names: "sharegpt", "jsonl" or "csv".
func ParseFormat(s string) (Format, error) {
	for _, f := range formats {
		if strings.EqualFold(strings.TrimSpace(s), string(f)) {
			return f, nil
		}
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("no dataset format given: want one of %s", formatList())
	}
	return "", fmt.Errorf("unknown dataset format %q: want one of %s", s, formatList())
}

func formatList() string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// FormatOf returns the format of the file path from its extension: .jsonl
// and .ndjson are FormatJSONL, .csv FormatCSV and .json FormatShareGPT.
func FormatOf(path string) (Format, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".jsonl", ".ndjson":
		return FormatJSONL, nil
	case ".csv":
		return FormatCSV, nil
	case ".json":
		return FormatShareGPT, nil
	case "":
		return "", fmt.Errorf("%s: no file extension to tell the dataset format by: pass a format (%s)", path, formatList())
	default:
		return "", fmt.Errorf("%s: cannot tell the dataset format by the extension %s: pass a format (%s)", path, ext, formatList())
	}
}

// MaxDatasetSize bounds a dataset file: its records are kept in memory.
const MaxDatasetSize = 1 << 30

// MaxPromptBytes bounds each text of a dataset's record (a message, a
// completion), checked as the record is read, before its tokens are
// counted: room for MaxPromptTokens tokens of any ordinary text (about
// 4 bytes a token), and a bound on what one record costs to count.
const MaxPromptBytes = 64 << 20

// LoadDataset reads the dataset file path in format, or in the format its
// extension tells (FormatOf) when format is "". The file is decoded as a
// stream, one record at a time; it must be a regular file (or a named
// pipe) of at most MaxDatasetSize bytes. An error names the file and,
// where the fault is in a record, its number (1-based) and line. When ctx
// ends, so do the wait for a named pipe's writer and its reads.
func LoadDataset(ctx context.Context, path string, format Format) (*Dataset, error) {
	format, err := resolveFormat(path, format)
	if err != nil {
		return nil, err
	}
	f, err := capped.OpenContext(ctx, path, MaxDatasetSize)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	return decodeDataset(path, format, f)
}

// resolveFormat checks format, or tells it from path's extension when "".
func resolveFormat(path string, format Format) (Format, error) {
	if format == "" {
		return FormatOf(path)
	}
	return ParseFormat(string(format))
}

// decodeDataset decodes a dataset in format from r; path names it in
// errors.
func decodeDataset(path string, format Format, r io.Reader) (*Dataset, error) {
	return decodeDatasetCapped(path, format, r, defaultCaps)
}

// decodeDatasetCapped is decodeDataset within caps.
func decodeDatasetCapped(path string, format Format, r io.Reader, caps datasetCaps) (*Dataset, error) {
	src := &capped.FailureReader{R: r}
	br := bufio.NewReaderSize(src, 64<<10)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	d := &Dataset{Path: path, Format: format, caps: caps}
	var err error
	switch format {
	case FormatShareGPT:
		err = d.decodeShareGPT(br)
	case FormatJSONL:
		err = d.decodeJSONL(br)
	case FormatCSV:
		err = d.decodeCSV(br)
	default:
		err = fmt.Errorf("%s: unknown dataset format %q: want one of %s", path, format, formatList())
	}
	if src.Err != nil {
		// The decoder's error, if any, is about the input cut short.
		return nil, fmt.Errorf("%s: reading: %w", path, src.Err)
	}
	if err != nil {
		return nil, err
	}
	if len(d.Records) == 0 {
		if d.Skipped > 0 {
			return nil, fmt.Errorf("%s: no records: no conversation has a user turn (%d skipped)", path, d.Skipped)
		}
		return nil, fmt.Errorf("%s: no records", path)
	}
	return d, nil
}

// recordError is an error in record n (1-based), which starts at line.
func (d *Dataset) recordError(n, line int, format string, args ...any) error {
	return fmt.Errorf("%s: record %d (line %d): %s", d.Path, n, line, fmt.Sprintf(format, args...))
}

// checkTexts refuses record n (1-based, at line) when one of its texts is
// longer than d.caps.text bytes.
func (d *Dataset) checkTexts(n, line int, rec Record) error {
	tooLong := func(what string, size int) error {
		return d.recordError(n, line, "%s is %d bytes, more than llmrun's limit of %s for a prompt or message (see docs/limits.md)",
			what, size, capped.Size(int64(d.caps.text)))
	}
	for i, m := range rec.Messages {
		if len(m.Content) > d.caps.text {
			return tooLong(fmt.Sprintf("message %d (%s)", i+1, m.Role), len(m.Content))
		}
	}
	if len(rec.Completion) > d.caps.text {
		return tooLong("the completion", len(rec.Completion))
	}
	return nil
}

// newRecord makes a record of a conversation; ok is false when it has no
// user message.
func newRecord(id string, msgs []Message, completion string, outputTokens int) (rec Record, ok bool) {
	user := -1
	for i, m := range msgs {
		if m.Role == RoleUser {
			user = i
			break
		}
	}
	if user < 0 {
		return Record{}, false
	}
	if completion == "" {
		for _, m := range msgs[user+1:] {
			if m.Role == RoleAssistant {
				completion = m.Content
				break
			}
		}
	}
	return Record{ID: id, Messages: msgs, Prompt: msgs[user].Content, Completion: completion, OutputTokens: outputTokens}, true
}

// promptMessages is the conversation of a plain prompt.
func promptMessages(system, prompt string) []Message {
	if system == "" {
		return []Message{{Role: RoleUser, Content: prompt}}
	}
	return []Message{{Role: RoleSystem, Content: system}, {Role: RoleUser, Content: prompt}}
}

// shareGPTRoles maps ShareGPT's from values to roles.
var shareGPTRoles = map[string]string{
	"human":     RoleUser,
	"user":      RoleUser,
	"gpt":       RoleAssistant,
	"assistant": RoleAssistant,
	"chatgpt":   RoleAssistant,
	"bing":      RoleAssistant,
	"bard":      RoleAssistant,
	"system":    RoleSystem,
}

const shareGPTFromValues = "human, gpt, system, user, assistant, chatgpt, bing, bard"

// shareGPTRecord is one element of a ShareGPT array.
type shareGPTRecord struct {
	ID            looseID        `json:"id"`
	Conversations []shareGPTTurn `json:"conversations"`
}

type shareGPTTurn struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

// decodeShareGPT decodes a ShareGPT array one conversation at a time.
func (d *Dataset) decodeShareGPT(r io.Reader) error {
	in := &positionReader{r: r, line: 1, limit: d.caps.record}
	dec := json.NewDecoder(in)
	tok, err := dec.Token()
	if err == io.EOF {
		return nil // no records
	}
	if err != nil || tok != json.Delim('[') {
		at, _ := in.nonSpace(0)
		return d.positionError(in, at, errors.New("not a JSON array (a ShareGPT file is an array of conversations)"))
	}
	in.advance(dec.InputOffset())
	for n := 1; dec.More(); n++ {
		var elem shareGPTRecord
		err := dec.Decode(&elem)
		if errors.Is(err, errTooLong) {
			line, _ := in.position(in.valueStart(n > 1))
			return d.recordError(n, line, "longer than %s", capped.Size(int64(d.caps.record)))
		}
		if err != nil {
			return d.jsonError(in, n, err)
		}
		start := in.valueStart(n > 1)
		line, _ := in.position(start)
		if elem.Conversations == nil {
			return d.recordError(n, line, `no "conversations" array`)
		}
		msgs := make([]Message, len(elem.Conversations))
		for i, turn := range elem.Conversations {
			role, ok := shareGPTRoles[turn.From]
			if !ok {
				return d.recordError(n, line, "conversations[%d].from %q is not one of %s", i, turn.From, shareGPTFromValues)
			}
			msgs[i] = Message{Role: role, Content: turn.Value}
		}
		if rec, ok := newRecord(string(elem.ID), msgs, "", 0); ok {
			if err := d.checkTexts(n, line, rec); err != nil {
				return err
			}
			d.Records = append(d.Records, rec)
		} else {
			d.Skipped++
		}
		in.advance(dec.InputOffset())
	}
	if _, err := dec.Token(); err != nil {
		// More stopped at the end of the input or a byte that is not ']'.
		at, ok := in.nonSpace(in.base)
		if !ok {
			return d.positionError(in, at, errors.New("unexpected end of file: the array is not closed"))
		}
		return d.positionError(in, at, err)
	}
	in.advance(dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		at, _ := in.nonSpace(in.base)
		return d.positionError(in, at, errors.New("data after the array"))
	}
	return nil
}

// jsonError describes err, from decoding ShareGPT record n (1-based), the
// value that follows in.base.
func (d *Dataset) jsonError(in *positionReader, n int, err error) error {
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) && err != io.ErrUnexpectedEOF && err != io.EOF {
		line, _ := in.position(in.valueStart(n > 1))
		return fmt.Errorf("%s: record %d (line %d): %w", d.Path, n, line, describeDecodeError(err))
	}
	// The decoder's offsets do not locate a syntax error in the stream:
	// scan the record's bytes again, all of which in still holds.
	at, ok := in.nonSpace(in.base)
	if n > 1 && ok {
		if in.buf[at-in.base] != ',' {
			return d.recordPositionError(in, n, at, errors.New("expected comma after array element"))
		}
		at, ok = in.nonSpace(at + 1)
	}
	if !ok {
		return d.recordPositionError(in, n, at, errors.New("unexpected end of file"))
	}
	err = json.NewDecoder(bytes.NewReader(in.buf[at-in.base:])).Decode(new(json.RawMessage))
	if errors.As(err, &syntax) {
		return d.recordPositionError(in, n, at+syntax.Offset-1, syntax)
	}
	return d.recordPositionError(in, n, in.end(), errors.New("unexpected end of file"))
}

// recordPositionError is err in record n at offset at.
func (d *Dataset) recordPositionError(in *positionReader, n int, at int64, err error) error {
	line, col := in.position(at)
	return fmt.Errorf("%s: record %d (line %d, column %d): %w", d.Path, n, line, col, err)
}

// positionError is err at offset at, outside any record.
func (d *Dataset) positionError(in *positionReader, at int64, err error) error {
	line, col := in.position(at)
	return fmt.Errorf("%s: line %d, column %d: %w", d.Path, line, col, err)
}

// positionReader passes a json.Decoder's reads through, keeping the bytes
// read past the offset base so that offsets in them turn into lines and
// columns: lines are counted as the decoder goes, without reading the
// file again.
type positionReader struct {
	r         io.Reader
	limit     int    // the most bytes buf holds: a conversation and what the decoder read past it
	buf       []byte // the bytes at offsets [base, base+len(buf))
	base      int64
	line      int   // the line of offset base, 1-based
	lineStart int64 // the offset of that line's first byte
}

// errTooLong is a conversation longer than positionReader's limit.
var errTooLong = errors.New("longer than the limit")

// Read fails once buf holds more than limit bytes: the decoder reads
// only while the value it decodes is not complete, so buf is then that
// value (after its comma) cut short.
func (p *positionReader) Read(b []byte) (int, error) {
	if len(p.buf) > p.limit {
		return 0, errTooLong
	}
	n, err := p.r.Read(b)
	p.buf = append(p.buf, b[:n]...)
	return n, err
}

// end is the offset past the last byte read.
func (p *positionReader) end() int64 { return p.base + int64(len(p.buf)) }

// advance forgets the bytes before offset off, counting their lines.
func (p *positionReader) advance(off int64) {
	k := int(min(max(off-p.base, 0), int64(len(p.buf))))
	p.line, p.lineStart = p.lineAt(k)
	p.base += int64(k)
	p.buf = p.buf[:copy(p.buf, p.buf[k:])]
}

// lineAt returns the line of buf[k] and the offset of its first byte.
func (p *positionReader) lineAt(k int) (line int, start int64) {
	seg := p.buf[:k]
	i := bytes.LastIndexByte(seg, '\n')
	if i < 0 {
		return p.line, p.lineStart
	}
	return p.line + bytes.Count(seg, []byte{'\n'}), p.base + int64(i) + 1
}

// position returns the line and column (both 1-based, the column in
// bytes) of offset off, which is at or past base.
func (p *positionReader) position(off int64) (line, col int) {
	off = min(max(off, p.base), p.end())
	line, start := p.lineAt(int(off - p.base))
	return line, int(off-start) + 1
}

// nonSpace returns the offset of the first byte at or after off that is
// not JSON white space; ok is false, and the offset the end, when the
// bytes read end first.
func (p *positionReader) nonSpace(off int64) (at int64, ok bool) {
	for i := max(off-p.base, 0); i < int64(len(p.buf)); i++ {
		switch p.buf[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return p.base + i, true
		}
	}
	return p.end(), false
}

// valueStart is the offset of the array element that follows base, past
// its comma when comma is set.
func (p *positionReader) valueStart(comma bool) int64 {
	at, ok := p.nonSpace(p.base)
	if comma && ok && p.buf[at-p.base] == ',' {
		at, _ = p.nonSpace(at + 1)
	}
	return at
}

// jsonlRecord is one line of a JSONL dataset.
type jsonlRecord struct {
	ID           looseID       `json:"id"`
	Prompt       *string       `json:"prompt"`
	Messages     []jsonMessage `json:"messages"`
	System       string        `json:"system"`
	Completion   string        `json:"completion"`
	OutputTokens tokenCount    `json:"output_tokens"`
	Images       []string      `json:"images"`
}

type jsonMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// decodeJSONL decodes a JSONL dataset one line at a time.
func (d *Dataset) decodeJSONL(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, d.caps.record)), d.caps.record)
	line, n := 0, 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		n++
		var rec jsonlRecord
		if err := json.Unmarshal(text, &rec); err != nil {
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				return fmt.Errorf("%s: record %d (line %d, column %d): %w", d.Path, n, line, syntax.Offset, err)
			}
			return fmt.Errorf("%s: record %d (line %d): %w", d.Path, n, line, describeDecodeError(err))
		}
		var msgs []Message
		switch {
		case rec.Prompt != nil && rec.Messages != nil:
			return d.recordError(n, line, `both "prompt" and "messages" fields`)
		case rec.Prompt != nil:
			msgs = promptMessages(rec.System, *rec.Prompt)
		case rec.Messages != nil:
			var err error
			if msgs, err = chatMessages(rec.System, rec.Messages); err != nil {
				return fmt.Errorf("%s: record %d (line %d): %w", d.Path, n, line, err)
			}
		default:
			return d.recordError(n, line, `no "prompt" or "messages" field`)
		}
		out, ok := newRecord(string(rec.ID), msgs, rec.Completion, int(rec.OutputTokens))
		if !ok {
			return d.recordError(n, line, `no message with role "user" in "messages"`)
		}
		out.Images = rec.Images
		if err := d.checkTexts(n, line, out); err != nil {
			return err
		}
		d.Records = append(d.Records, out)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s: line %d: longer than %s", d.Path, line+1, capped.Size(int64(d.caps.record)))
		}
		return err // a read error, which decodeDataset reports
	}
	return nil
}

// chatMessages checks the roles of msgs and returns them as a
// conversation, after a system message when system is not "".
func chatMessages(system string, msgs []jsonMessage) ([]Message, error) {
	out := make([]Message, 0, len(msgs)+1)
	if system != "" {
		out = append(out, Message{Role: RoleSystem, Content: system})
	}
	for i, m := range msgs {
		var role string
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant:
			role = m.Role
		default:
			return nil, fmt.Errorf("messages[%d].role %q is not one of %s, %s, %s", i, m.Role, RoleSystem, RoleUser, RoleAssistant)
		}
		out = append(out, Message{Role: role, Content: m.Content})
	}
	return out, nil
}

// decodeCSV decodes a CSV dataset one row at a time.
func (d *Dataset) decodeCSV(r io.Reader) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil // no records
	}
	if err != nil {
		return d.csvError(0, err)
	}
	cols := map[string]int{"id": -1, "prompt": -1, "system": -1, "output_tokens": -1, "completion": -1, "image": -1}
	names := make([]string, len(header))
	for i, h := range header {
		names[i] = strings.TrimSpace(h)
		key := strings.ToLower(names[i])
		if at, ok := cols[key]; ok {
			if at >= 0 {
				return fmt.Errorf("%s: the header has two %q columns", d.Path, key)
			}
			cols[key] = i
		}
	}
	if cols["prompt"] < 0 {
		return fmt.Errorf("%s: no \"prompt\" column in the header (columns: %s)", d.Path, strings.Join(names, ", "))
	}
	field := func(row []string, name string) string {
		if i := cols[name]; i >= 0 {
			return row[i]
		}
		return ""
	}
	for n := 1; ; n++ {
		row, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var perr *csv.ParseError
			if errors.As(err, &perr) && perr.Err == csv.ErrFieldCount {
				return d.recordError(n, perr.StartLine, "wrong number of fields: %d, the header has %d", len(row), len(header))
			}
			return d.csvError(n, err)
		}
		line, _ := cr.FieldPos(0)
		outputTokens := 0
		if s := strings.TrimSpace(field(row, "output_tokens")); s != "" {
			if outputTokens, err = parseTokenCount(s); err != nil {
				return d.recordError(n, line, "%v", err)
			}
		}
		rec, _ := newRecord(field(row, "id"), promptMessages(field(row, "system"), field(row, "prompt")), field(row, "completion"), outputTokens)
		if image := strings.TrimSpace(field(row, "image")); image != "" {
			rec.Images = []string{image}
		}
		if err := d.checkTexts(n, line, rec); err != nil {
			return err
		}
		d.Records = append(d.Records, rec)
	}
}

// csvError describes err from reading record n (1-based; 0 is the header).
func (d *Dataset) csvError(n int, err error) error {
	var perr *csv.ParseError
	if !errors.As(err, &perr) {
		return err // a read error, which decodeDataset reports
	}
	where := fmt.Sprintf("record %d", n)
	if n == 0 {
		where = "the header"
	}
	return fmt.Errorf("%s: %s (line %d, column %d): %w", d.Path, where, perr.Line, perr.Column, perr.Err)
}

// looseID is an "id" field: a JSON string, or a number kept as written.
type looseID string

func (id *looseID) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*id = looseID(s)
	case b[0] == '-' || b[0] >= '0' && b[0] <= '9':
		*id = looseID(b)
	default:
		return fmt.Errorf(`"id" is %s, want a string or a number`, jsonKind(b))
	}
	return nil
}

// tokenCount is an "output_tokens" field: a non-negative integer, 0 when
// null.
type tokenCount int

func (c *tokenCount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	n, err := parseTokenCount(string(b))
	*c = tokenCount(n)
	return err
}

// parseTokenCount parses an output_tokens value.
func parseTokenCount(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if errors.Is(err, strconv.ErrRange) && n > 0 {
		return 0, fmt.Errorf("output_tokens %s is too large", s)
	}
	if err != nil || n < 0 {
		return 0, fmt.Errorf("output_tokens %s is not a non-negative integer", s)
	}
	return int(n), nil
}

// jsonKind names the kind of the JSON value b, an object, an array or a
// boolean.
func jsonKind(b []byte) string {
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	default:
		return "a boolean"
	}
}

// describeDecodeError rewords a field of the wrong JSON type without Go's
// type names.
func describeDecodeError(err error) error {
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) {
		return err
	}
	var want string
	switch typ.Type.Kind() {
	case reflect.String:
		want = "a string"
	case reflect.Slice:
		want = "an array"
	case reflect.Struct:
		want = "an object"
	default:
		want = typ.Type.String()
	}
	what := "the record"
	if typ.Field != "" {
		what = strconv.Quote(typ.Field)
	}
	return fmt.Errorf("%s is a JSON %s, want %s", what, typ.Value, want)
}

// PromptTokens returns the number of tokens tok makes of record i's
// Prompt. It is counted once per record and tokenizer name, then cached;
// safe for concurrent use.
func (d *Dataset) PromptTokens(i int, tok tokenizer.Tokenizer) (int, error) {
	if err := d.checkIndex(i); err != nil {
		return 0, err
	}
	return d.cachedCount(&d.cache(tok).prompt[i], d.Records[i].Prompt, tok, i, "prompt")
}

// OutputTokens returns record i's OutputTokens when set, else the number
// of tokens tok makes of its Completion (0 when it has none). It is
// counted once per record and tokenizer name, then cached; safe for
// concurrent use.
func (d *Dataset) OutputTokens(i int, tok tokenizer.Tokenizer) (int, error) {
	if err := d.checkIndex(i); err != nil {
		return 0, err
	}
	rec := &d.Records[i]
	if rec.OutputTokens > 0 {
		return rec.OutputTokens, nil
	}
	if rec.Completion == "" {
		return 0, nil
	}
	return d.cachedCount(&d.cache(tok).output[i], rec.Completion, tok, i, "completion")
}

func (d *Dataset) checkIndex(i int) error {
	if i < 0 || i >= len(d.Records) {
		return fmt.Errorf("%s: record index %d out of range [0, %d)", d.Path, i, len(d.Records))
	}
	return nil
}

// cache returns the token counts of d's records under tok.
func (d *Dataset) cache(tok tokenizer.Tokenizer) *tokenCounts {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.counts[tok.Name()]
	if c == nil {
		c = &tokenCounts{prompt: make([]atomic.Int32, len(d.Records)), output: make([]atomic.Int32, len(d.Records))}
		for i := range c.prompt {
			c.prompt[i].Store(-1)
			c.output[i].Store(-1)
		}
		if d.counts == nil {
			d.counts = map[string]*tokenCounts{}
		}
		d.counts[tok.Name()] = c
	}
	return c
}

// cachedCount returns the count in slot, counting text with tok when
// there is none yet. Goroutines that race to count the same text store the
// same number.
func (d *Dataset) cachedCount(slot *atomic.Int32, text string, tok tokenizer.Tokenizer, i int, what string) (int, error) {
	if n := slot.Load(); n >= 0 {
		return int(n), nil
	}
	n, err := tok.Count(text)
	if err != nil {
		return 0, fmt.Errorf("%s: record %d: counting %s tokens: %w", d.Path, i+1, what, err)
	}
	if n <= math.MaxInt32 {
		slot.Store(int32(n))
	}
	return n, nil
}

// Datasets is a process's set of loaded datasets. Open loads each file
// once, by absolute path and format, and gives every caller the same
// *Dataset. The zero value is ready to use.
type Datasets struct {
	mu sync.Mutex
	m  map[datasetKey]*datasetLoad
	// load is LoadDataset, unless a test counts the loads.
	load func(ctx context.Context, path string, format Format) (*Dataset, error)
}

type datasetKey struct {
	path   string
	format Format
}

// datasetLoad is one file's load, done once for every caller.
type datasetLoad struct {
	once sync.Once
	d    *Dataset
	err  error
}

// Open returns the dataset at path in format ("" for the one its extension
// tells), loading it on the first call, under the first caller's ctx:
// concurrent callers wait for that load, and a failed load's error is
// returned to every caller. The dataset's Path is the path its first
// caller gave.
func (s *Datasets) Open(ctx context.Context, path string, format Format) (*Dataset, error) {
	format, err := resolveFormat(path, format)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	key := datasetKey{abs, format}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[datasetKey]*datasetLoad{}
	}
	l := s.m[key]
	if l == nil {
		l = &datasetLoad{}
		s.m[key] = l
	}
	load := s.load
	s.mu.Unlock()
	l.once.Do(func() {
		if load == nil {
			load = LoadDataset
		}
		l.d, l.err = load(ctx, path, format)
	})
	return l.d, l.err
}
