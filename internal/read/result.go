package read

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/rowkit/rowkit/internal/jsonstr"
)

// Status tells the variants of a Result apart.
type Status string

// The statuses of a read.
const (
	StatusOK          Status = "ok"          // text, converted text or a directory listing, read as text
	StatusMedia       Status = "media"       // a converter returned media parts (an image)
	StatusUnsupported Status = "unsupported" // a classifier or converter refused the content
	StatusError       Status = "error"       // the read failed; Error says why
)

// Result is the outcome of one read. It is one struct for every status, so
// that an MCP output schema can be inferred from it: the fields a status
// does not have are omitted (request and file are null when unknown).
//
//	ok:          request, file, classification, conversion, view, truncation, continuation, totals, observation, notes
//	media:       request, file, classification, conversion, parts, observation, notes
//	unsupported: code, request, file, classification, notes
//	error:       error, request, file, notes
//
// As in seed 003, an ok result's conversion is null for plain text and its
// observation null for a directory (MarshalJSON writes them).
type Result struct {
	Tool           string          `json:"tool" jsonschema:"always read"`
	Status         Status          `json:"status" jsonschema:"ok, media, unsupported or error"`
	Code           string          `json:"code,omitempty" jsonschema:"unsupported only: why the content was refused, e.g. PDF, BINARY, NOTEBOOK, TOO_LARGE"`
	Error          *ToolError      `json:"error,omitempty" jsonschema:"error only: what failed"`
	Request        *Request        `json:"request" jsonschema:"the validated canonical input; null only for INVALID_INPUT"`
	File           *FileInfo       `json:"file" jsonschema:"the file that was read; null for failures before it was opened and allowed"`
	Classification *Classification `json:"classification,omitempty" jsonschema:"what the content was taken for"`
	Conversion     *Conversion     `json:"conversion,omitempty" jsonschema:"the converter that produced the text or media; null for plain text, absent for unsupported and error"`
	View           *View           `json:"view,omitempty" jsonschema:"ok only: the lines shown"`
	Parts          []MediaPart     `json:"parts,omitempty" jsonschema:"media only: what the converter returned"`
	Truncation     *Truncation     `json:"truncation,omitempty" jsonschema:"ok only: what bounded the view"`
	Continuation   *Continuation   `json:"continuation,omitempty" jsonschema:"ok only: how to read on"`
	Totals         *Totals         `json:"totals,omitempty" jsonschema:"ok only: the size of the whole text"`
	Observation    *Observation    `json:"observation,omitempty" jsonschema:"what the reader saw, so that a later edit can prove it; null for directories, absent for unsupported and error"`
	Notes          []Note          `json:"notes" jsonschema:"view notes, then classifier and converter notes, then empty, then authorizer and resolver notes; for an error the error note first"`
}

// ToolError is the error of a failed read.
type ToolError struct {
	Code    string    `json:"code" jsonschema:"UPPER_SNAKE error code, e.g. NOT_FOUND"`
	Phase   Phase     `json:"phase" jsonschema:"the phase that failed: input, resolve, open, authorize, sampling, conversion, scan or verification"`
	Message string    `json:"message" jsonschema:"one line: what happened and what to do"`
	Data    *NoteData `json:"data,omitempty" jsonschema:"details, copied from the error note"`
}

// Request is the validated canonical input.
type Request struct {
	Path   string `json:"path" jsonschema:"the path as given, relative to the root"`
	Offset int    `json:"offset" jsonschema:"first line, one-based"`
	Limit  int    `json:"limit" jsonschema:"most lines to show"`
	Ranged bool   `json:"ranged" jsonschema:"the input set offset or limit"`
}

// Next is a complete canonical input: send it again to read on.
type Next struct {
	Path   string `json:"path" jsonschema:"the path to read"`
	Offset int    `json:"offset" jsonschema:"first line, one-based"`
	Limit  int    `json:"limit" jsonschema:"most lines to show"`
}

// FileInfo describes the file that was read.
type FileInfo struct {
	RequestedPath string  `json:"requestedPath" jsonschema:"the path as the caller gave it"`
	ResolvedPath  string  `json:"resolvedPath" jsonschema:"the canonical target relative to the root (symlinks resolved; . for the root)"`
	DisplayPath   string  `json:"displayPath" jsonschema:"the clean path used in messages"`
	Backend       string  `json:"backend" jsonschema:"the filesystem: os"`
	Size          int64   `json:"size" jsonschema:"size in bytes from stat"`
	MtimeMs       int64   `json:"mtimeMs" jsonschema:"modification time, Unix milliseconds"`
	Identity      *string `json:"identity" jsonschema:"device:inode"`
	MimeType      string  `json:"mimeType" jsonschema:"the content's media type"`
	ResolvedFrom  *string `json:"resolvedFrom" jsonschema:"the caller's path when a path resolver changed it, else null"`
	Version       *string `json:"version" jsonschema:"change token: size, modification and change times in nanoseconds"`
}

// Classification says what the content was taken for.
type Classification struct {
	Kind       string   `json:"kind" jsonschema:"text, unsupported or directory"`
	Classifier string   `json:"classifier" jsonschema:"the classifier's id, fs for a directory"`
	Code       *string  `json:"code" jsonschema:"the unsupported code; null for text and directories"`
	MimeType   string   `json:"mimeType" jsonschema:"the content's media type"`
	Confidence string   `json:"confidence" jsonschema:"high (a signature or a whole valid sample), medium or low (a name)"`
	Reasons    []string `json:"reasons" jsonschema:"what the decision rests on"`
}

// Conversion names the converter that produced the text or media.
type Conversion struct {
	Converter string `json:"converter" jsonschema:"the converter's id: notebook, image, directory"`
	MimeType  string `json:"mimeType" jsonschema:"the type of what it produced"`
}

// View is the window of lines shown.
type View struct {
	Lines     []Line `json:"lines" jsonschema:"the lines shown"`
	StartLine int    `json:"startLine" jsonschema:"the first line shown (the offset)"`
	EndLine   int    `json:"endLine" jsonschema:"the last line shown; startLine-1 when the view is empty"`
	Bytes     int    `json:"bytes" jsonschema:"UTF-8 bytes of the shown text plus one separator per line after the first"`
	Partial   bool   `json:"partial" jsonschema:"the view starts after line 1, stops before the end, or was truncated"`
}

// Line is one line of the view.
type Line struct {
	Number      int    `json:"number" jsonschema:"one-based line number"`
	Hash        string `json:"hash,omitempty" jsonschema:"verified-row hash of the whole line (LINE:HASH names it as an edit target); absent for converted text"`
	Text        string `json:"text" jsonschema:"the line without its terminator, clamped to maxCharsPerLine"`
	Clamped     bool   `json:"clamped" jsonschema:"true when text is a prefix of the line (the line was clamped)"`
	SourceChars *int   `json:"sourceChars" jsonschema:"the line's length in characters; null unless the line was clamped"`
}

// Truncation says what bounded the view.
type Truncation struct {
	Truncated bool     `json:"truncated" jsonschema:"something was left out"`
	Reasons   []string `json:"reasons" jsonschema:"in this order: lines, bytes, budget, scan-limit, line-length"`
	Primary   *string  `json:"primary" jsonschema:"the first reason, or null"`
}

// Continuation says how to read on.
type Continuation struct {
	Available bool  `json:"available" jsonschema:"more lines can be read with next"`
	Next      *Next `json:"next" jsonschema:"the input of the next view, or null"`
}

// Totals is the size of the whole text.
type Totals struct {
	Lines *int  `json:"lines" jsonschema:"logical lines; null when the scan limit stopped counting"`
	Exact bool  `json:"exact" jsonschema:"lines is the exact count"`
	Bytes int64 `json:"bytes" jsonschema:"bytes scanned when the scan reached the end, else the file size; for converted text the converted size"`
}

// Observation records what the reader saw.
type Observation struct {
	ID               string  `json:"id" jsonschema:"this observation"`
	StatID           string  `json:"statId" jsonschema:"hash of the file's identity, size and times"`
	ContentID        *string `json:"contentId" jsonschema:"sha256: of the source bytes; null when the scan stopped before the end"`
	ViewID           string  `json:"viewId" jsonschema:"sha256: of the rows shown (LINE:HASH TEXT lines), or of the media parts"`
	ObservedAt       string  `json:"observedAt" jsonschema:"when, RFC 3339 UTC"`
	WholeFileVisible bool    `json:"wholeFileVisible" jsonschema:"offset 1, nothing truncated or clamped"`
}

// MediaPart is content that is not text. Data is base64 already (not a
// []byte) so that the inferred schema says string, as the JSON is.
type MediaPart struct {
	Type      string `json:"type" jsonschema:"always media"`
	MediaType string `json:"mediaType" jsonschema:"e.g. image/png"`
	Data      string `json:"data" jsonschema:"the bytes, standard base64"`
	Name      string `json:"name,omitempty" jsonschema:"the file's base name"`
}

// Note is one remark about a read, printed as [read:CODE] MESSAGE.
type Note struct {
	Code     string    `json:"code" jsonschema:"stable kebab-case code"`
	Severity string    `json:"severity" jsonschema:"info or warning"`
	Message  string    `json:"message" jsonschema:"one line of explanation"`
	Retry    *Next     `json:"retry,omitempty" jsonschema:"an input to send next"`
	Data     *NoteData `json:"data,omitempty" jsonschema:"details; the fields depend on code"`
}

// NoteData holds the details of a note; each code sets its own fields.
type NoteData struct {
	Reason              string   `json:"reason,omitempty" jsonschema:"continue: the primary truncation reason"`
	Param               string   `json:"param,omitempty" jsonschema:"clamped: the parameter"`
	Requested           *int     `json:"requested,omitempty" jsonschema:"clamped: the value asked for"`
	Max                 *int     `json:"max,omitempty" jsonschema:"clamped: the ceiling"`
	ReachedLine         *int     `json:"reachedLine,omitempty" jsonschema:"offset-unreached: the last complete line the scan reached"`
	Line                *int     `json:"line,omitempty" jsonschema:"first-line-exceeds-byte-limit: the line"`
	Lines               []int    `json:"lines,omitempty" jsonschema:"line-clamped: at most 20 clamped line numbers"`
	Total               *int     `json:"total,omitempty" jsonschema:"line-clamped: how many lines were clamped"`
	MaxChars            *int     `json:"maxChars,omitempty" jsonschema:"line-clamped: maxCharsPerLine"`
	MaxScanBytes        *int64   `json:"maxScanBytes,omitempty" jsonschema:"scan-limit: the limit"`
	TotalLines          *int     `json:"totalLines,omitempty" jsonschema:"offset-past-eof: the lines there are"`
	Suggestions         []string `json:"suggestions,omitempty" jsonschema:"not-found: nearby names"`
	EntriesTruncated    bool     `json:"entriesTruncated,omitempty" jsonschema:"not-found: the directory had too many entries to compare them all"`
	Kind                string   `json:"kind,omitempty" jsonschema:"not-a-file: directory, fifo, socket or device"`
	Stage               string   `json:"stage,omitempty" jsonschema:"too-large: convert or media"`
	Limit               *int64   `json:"limit,omitempty" jsonschema:"too-large: the limit in bytes"`
	Size                *int64   `json:"size,omitempty" jsonschema:"too-large: the size"`
	MaxDirectoryEntries *int     `json:"maxDirectoryEntries,omitempty" jsonschema:"directory-truncated: the limit"`
	Phase               string   `json:"phase,omitempty" jsonschema:"aborted: the stage at the time"`
	Path                string   `json:"path,omitempty" jsonschema:"invalid-input: the path given"`
	From                string   `json:"from,omitempty" jsonschema:"path-repaired: the path given"`
	To                  string   `json:"to,omitempty" jsonschema:"path-repaired: the path used"`
	Pattern             string   `json:"pattern,omitempty" jsonschema:"denied by an authorizer: the rule that matched"`
	Source              string   `json:"source,omitempty" jsonschema:"denied by an authorizer: the authorizer's own note code"`
	Extension           string   `json:"extension,omitempty" jsonschema:"extension-failed: which extension"`
	ID                  string   `json:"id,omitempty" jsonschema:"extension-failed: the extension's id"`
	Offset              *int64   `json:"offset,omitempty" jsonschema:"unsupported-unknown-encoding: byte offset of the first invalid byte"`
	Detail              string   `json:"detail,omitempty" jsonschema:"the filesystem's explanation"`
}

// Phase is a stage of a read.
type Phase string

// The phases of a read, in order.
const (
	PhaseInput        Phase = "input"
	PhaseResolve      Phase = "resolve"
	PhaseOpen         Phase = "open"
	PhaseAuthorize    Phase = "authorize"
	PhaseSampling     Phase = "sampling"
	PhaseConversion   Phase = "conversion"
	PhaseScan         Phase = "scan"
	PhaseVerification Phase = "verification"
)

// Error codes of a failed read (Result.Error.Code, and the code of the
// *errs.Error that Read returns with it).
const (
	CodeInvalidInput       = "INVALID_INPUT"
	CodeNotFound           = "NOT_FOUND"
	CodeNotAFile           = "NOT_A_FILE"
	CodeDangerousPath      = "DANGEROUS_PATH"
	CodeOutside            = "OUTSIDE_ALLOWED_ROOTS"
	CodePermissionDenied   = "PERMISSION_DENIED"
	CodeDenied             = "DENIED"
	CodeTooLarge           = "TOO_LARGE"
	CodeChanged            = "CHANGED_DURING_READ"
	CodeAborted            = "ABORTED"
	CodeUnsupportedBackend = "UNSUPPORTED_BACKEND"
	CodeExtensionFailed    = "EXTENSION_FAILED"
	CodeIOError            = "IO_ERROR"
)

// Unsupported codes of the default classifiers and converters.
const (
	UnsupportedImage           = "IMAGE"
	UnsupportedPDF             = "PDF"
	UnsupportedOffice          = "OFFICE_DOCUMENT"
	UnsupportedNotebook        = "NOTEBOOK"
	UnsupportedBinary          = "BINARY"
	UnsupportedUnknownEncoding = "UNKNOWN_ENCODING"
	UnsupportedInvalidNotebook = "INVALID_NOTEBOOK"
	UnsupportedTooLarge        = "TOO_LARGE"
)

// MarshalJSON writes the view exactly as encoding/json would from the
// struct tags (field order, omitted fields, no HTML escaping), by hand:
// a 2,000-line view is most of a read_file result, and encoding it by
// reflection was the largest cost of serving one over MCP.
// TestViewMarshalJSON checks it against the reflective encoding.
func (v View) MarshalJSON() ([]byte, error) {
	return v.appendJSON(make([]byte, 0, 64+len(v.Lines)*80+v.Bytes)), nil
}

func (v *View) appendJSON(b []byte) []byte {
	b = append(b, `{"lines":`...)
	if v.Lines == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range v.Lines {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.Lines[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	b = append(b, `,"startLine":`...)
	b = strconv.AppendInt(b, int64(v.StartLine), 10)
	b = append(b, `,"endLine":`...)
	b = strconv.AppendInt(b, int64(v.EndLine), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(v.Bytes), 10)
	b = append(b, `,"partial":`...)
	b = strconv.AppendBool(b, v.Partial)
	return append(b, '}')
}

func (l *Line) appendJSON(b []byte) []byte {
	b = append(b, `{"number":`...)
	b = strconv.AppendInt(b, int64(l.Number), 10)
	if l.Hash != "" {
		b = append(b, `,"hash":`...)
		b = jsonstr.Append(b, l.Hash)
	}
	b = append(b, `,"text":`...)
	b = jsonstr.Append(b, l.Text)
	b = append(b, `,"clamped":`...)
	b = strconv.AppendBool(b, l.Clamped)
	b = append(b, `,"sourceChars":`...)
	if l.SourceChars == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*l.SourceChars), 10)
	}
	return append(b, '}')
}

// MarshalJSON writes the result in struct order with the tags' omissions,
// except that an ok result always carries conversion and observation, null
// when there is none (plain text; a directory), as seed 003's ok variant
// does: code written to the schema tests them against null. The other
// statuses leave out what their variants do not have. HTML characters are
// not escaped (an encoder that escapes them does so on the way out).
// TestResultMarshalJSON keeps it to the struct's fields and order.
func (r Result) MarshalJSON() ([]byte, error) {
	ok := r.Status == StatusOK
	size := 1024 // what is not the view's lines, most often
	if r.View != nil {
		// Each line's text and about 70 bytes of keys, number and hash.
		size += r.View.Bytes + r.View.Bytes/8 + 72*len(r.View.Lines)
	}
	w := objectWriter{b: make([]byte, 0, size)}
	w.b = append(w.b, '{')
	w.field("tool", r.Tool)
	w.field("status", r.Status)
	if r.Code != "" {
		w.field("code", r.Code)
	}
	if r.Error != nil {
		w.field("error", r.Error)
	}
	w.field("request", r.Request)
	w.field("file", r.File)
	if r.Classification != nil {
		w.field("classification", r.Classification)
	}
	if r.Conversion != nil || ok {
		w.field("conversion", r.Conversion)
	}
	if r.View != nil {
		w.raw("view", r.View.appendJSON)
	}
	if len(r.Parts) > 0 {
		w.field("parts", r.Parts)
	}
	if r.Truncation != nil {
		w.field("truncation", r.Truncation)
	}
	if r.Continuation != nil {
		w.field("continuation", r.Continuation)
	}
	if r.Totals != nil {
		w.field("totals", r.Totals)
	}
	if r.Observation != nil || ok {
		w.field("observation", r.Observation)
	}
	w.field("notes", r.Notes)
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// objectWriter appends the members of a JSON object, keeping the first
// error.
type objectWriter struct {
	b   []byte
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

func (w *objectWriter) key(k string) {
	if len(w.b) > 1 {
		w.b = append(w.b, ',')
	}
	w.b = append(jsonstr.Append(w.b, k), ':')
}

// field appends k and v as encoding/json writes v, without HTML escaping.
func (w *objectWriter) field(k string, v any) {
	if w.err != nil {
		return
	}
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.buf)
		w.enc.SetEscapeHTML(false)
	}
	w.buf.Reset()
	if w.err = w.enc.Encode(v); w.err == nil {
		w.key(k)
		w.b = append(w.b, bytes.TrimSuffix(w.buf.Bytes(), []byte{'\n'})...)
	}
}

// raw appends k and the value app writes.
func (w *objectWriter) raw(k string, app func([]byte) []byte) {
	if w.err == nil {
		w.key(k)
		w.b = app(w.b)
	}
}
