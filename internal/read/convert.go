package read

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultConverters are the notebook and image converters.
func DefaultConverters() []Converter { return []Converter{Notebooks{}, Images{}} }

// Notebooks renders Jupyter notebooks as text: each cell as a header line
// "[cell N: TYPE]" and its source, then the text of its outputs, each under
// "[output: TYPE]"; outputs with no text form are named and left out.
type Notebooks struct{}

func (Notebooks) ID() string { return "notebook" }

func (Notebooks) Accepts(c Classification, _ string) bool {
	return c.Code != nil && *c.Code == UnsupportedNotebook
}

func (Notebooks) Convert(_ context.Context, src []byte, _ string) (Converted, error) {
	text, err := RenderNotebook(src)
	if err != nil {
		return Converted{Refuse: UnsupportedInvalidNotebook, Notes: []Note{{Code: "invalid-notebook", Severity: "warning",
			Message: "the notebook cannot be read: " + err.Error()}}}, nil
	}
	return Converted{Text: text, MimeType: "text/plain"}, nil
}

// multiline is a notebook string: one string, or a list of strings joined.
type multiline string

func (m *multiline) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*m = multiline(s)
		return nil
	}
	var parts []string
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("a text field is neither a string nor a list of strings")
	}
	*m = multiline(strings.Join(parts, ""))
	return nil
}

type notebook struct {
	Cells *[]struct {
		CellType string    `json:"cell_type"`
		Source   multiline `json:"source"`
		Outputs  []struct {
			OutputType string               `json:"output_type"`
			Name       string               `json:"name"`
			Text       multiline            `json:"text"`
			Data       map[string]multiline `json:"data"`
			Ename      string               `json:"ename"`
			Evalue     string               `json:"evalue"`
		} `json:"outputs"`
	} `json:"cells"`
}

// RenderNotebook renders an nbformat 4 notebook as text.
func RenderNotebook(src []byte) ([]byte, error) {
	var nb notebook
	if err := json.Unmarshal(src, &nb); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("invalid JSON at byte %d", se.Offset)
		}
		return nil, errors.New("not an nbformat 4 notebook: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	if nb.Cells == nil {
		return nil, errors.New("not an nbformat 4 notebook: no cells list")
	}
	var b bytes.Buffer
	block := func(s string) {
		if s == "" {
			return
		}
		b.WriteString(s)
		if !strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, "\r") {
			b.WriteByte('\n')
		}
	}
	for i, c := range *nb.Cells {
		kind := c.CellType
		if kind == "" {
			kind = "unknown"
		}
		fmt.Fprintf(&b, "[cell %d: %s]\n", i+1, oneLine(kind))
		block(string(c.Source))
		for _, o := range c.Outputs {
			switch o.OutputType {
			case "stream":
				fmt.Fprintf(&b, "[output: stream %s]\n", oneLine(o.Name))
				block(string(o.Text))
			case "error":
				fmt.Fprintf(&b, "[output: error] %s: %s\n", oneLine(o.Ename), oneLine(o.Evalue))
			default:
				if t, ok := o.Data["text/plain"]; ok {
					fmt.Fprintf(&b, "[output: %s]\n", oneLine(o.OutputType))
					block(string(t))
					continue
				}
				types := make([]string, 0, len(o.Data))
				for k := range o.Data {
					types = append(types, oneLine(k))
				}
				slices.Sort(types)
				fmt.Fprintf(&b, "[output: %s %s omitted]\n", oneLine(o.OutputType), strings.Join(types, " "))
			}
		}
	}
	out := b.Bytes()
	if !utf8.Valid(out) {
		return nil, errors.New("the notebook's text is not valid UTF-8")
	}
	return out, nil
}

// Images returns PNG, JPEG, GIF and WebP files as media parts.
type Images struct{}

func (Images) ID() string { return "image" }

func (Images) Accepts(c Classification, _ string) bool {
	return c.Code != nil && *c.Code == UnsupportedImage
}

func (Images) Convert(_ context.Context, src []byte, name string) (Converted, error) {
	t := imageType(src)
	return Converted{MimeType: t, Parts: []MediaPart{{Type: "media", MediaType: t, Data: base64.StdEncoding.EncodeToString(src), Name: name}}}, nil
}

// DirectoryListing lists a directory one entry per line, sorted by name,
// directories with a trailing slash. A name that is not UTF-8 or holds a
// control character is written as a Go-quoted string, so that every entry
// stays one line. It keeps only the first max names while reading, so a
// huge directory costs no more memory than max names.
type DirectoryListing struct{}

func (DirectoryListing) List(ctx context.Context, dir fs.ReadDirFile, max int) ([]byte, bool, error) {
	var keep []string
	truncated := false
	for {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		batch, err := dir.ReadDir(512)
		for _, e := range batch {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			if needsQuote(e.Name()) {
				name = strconv.Quote(name)
			}
			keep = append(keep, name)
		}
		if len(keep) > max {
			slices.Sort(keep)
			keep, truncated = keep[:max], true
		}
		if err == io.EOF || len(batch) == 0 && err == nil {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	slices.Sort(keep)
	var b bytes.Buffer
	for _, n := range keep {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return b.Bytes(), truncated, nil
}

func needsQuote(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' && strings.HasPrefix(s, `"`) {
			return true
		}
	}
	return false
}

// directory reads a directory as its listing.
func (r *reader) directory(f *os.File) error {
	r.phase = PhaseConversion
	if r.opts.NoDirectories {
		return r.failf(CodeNotAFile, PhaseOpen, &NoteData{Kind: "directory"}, "%s is a directory", r.clean)
	}
	lister := r.opts.Directories
	if lister == nil {
		lister = DirectoryListing{}
	}
	var text []byte
	var truncated bool
	var err error
	if gerr := r.guard("directory lister", "", func() { text, truncated, err = lister.List(r.ctx, f, r.lim.MaxDirectoryEntries) }); gerr != nil {
		return gerr
	}
	if err != nil {
		return r.ioError(err)
	}
	r.res.Classification = &Classification{Kind: "directory", Classifier: "fs", MimeType: "inode/directory", Confidence: "high", Reasons: []string{"stat: directory"}}
	if truncated {
		r.tailNotes = append(r.tailNotes, Note{Code: "directory-truncated", Severity: "warning", Data: &NoteData{MaxDirectoryEntries: ptr(r.lim.MaxDirectoryEntries)},
			Message: fmt.Sprintf("%s has more than %d entries; the first %d by name are listed", r.clean, r.lim.MaxDirectoryEntries, r.lim.MaxDirectoryEntries)})
	}
	if len(text) == 0 {
		r.tailNotes = append(r.tailNotes, Note{Code: "empty-directory", Severity: "info", Message: r.clean + " is an empty directory"})
	}
	r.phase = PhaseScan
	sc, err := r.scan(bytes.NewReader(text), int64(len(text)), false)
	if err != nil {
		return err
	}
	r.finish(sc, &Conversion{Converter: "directory", MimeType: "text/plain"})
	return nil
}

// convert hands content a classifier refused to the first converter that
// accepts it.
func (r *reader) convert(f *os.File, head []byte, cls *Classification) error {
	r.phase = PhaseConversion
	code := *cls.Code
	cs := r.opts.Converters
	if cs == nil {
		cs = DefaultConverters()
	}
	var conv Converter
	for _, c := range cs {
		var ok bool
		if err := r.guard("converter", c.ID(), func() { ok = c.Accepts(*cls, r.file.DisplayPath) }); err != nil {
			return err
		}
		if ok {
			conv = c
			break
		}
	}
	if conv == nil {
		r.unsupported(code, unsupportedNote(code, r.clean))
		return nil
	}
	tooLarge := func(stage string, limit, size int64) error {
		r.unsupported(UnsupportedTooLarge, Note{Code: "too-large", Severity: "warning",
			Data:    &NoteData{Stage: stage, Limit: ptr(limit), Size: ptr(size)},
			Message: fmt.Sprintf("%s is too large to convert (%s: %d bytes, limit %d)", r.clean, stage, size, limit)})
		return nil
	}
	if r.fi.Size() > r.lim.MaxConvertBytes {
		return tooLarge("convert", r.lim.MaxConvertBytes, r.fi.Size())
	}
	src := make([]byte, len(head), r.fi.Size()+1)
	copy(src, head)
	rest, err := io.ReadAll(io.LimitReader(f, r.lim.MaxConvertBytes+1-int64(len(head))))
	if err != nil {
		return r.ioError(err)
	}
	src = append(src, rest...)
	if int64(len(src)) > r.lim.MaxConvertBytes {
		return tooLarge("convert", r.lim.MaxConvertBytes, int64(len(src)))
	}
	r.phase = PhaseVerification
	if testHookBeforeVerify != nil {
		testHookBeforeVerify(r.abs())
	}
	if err := r.verify(f, &scanResult{reachedEnd: true, scanned: int64(len(src))}); err != nil {
		return err
	}
	r.phase = PhaseConversion
	var out Converted
	var cerr error
	if err := r.guard("converter", conv.ID(), func() { out, cerr = conv.Convert(r.ctx, src, baseName(r.target)) }); err != nil {
		return err
	}
	if cerr != nil {
		return r.ioError(cerr)
	}
	sum := sha256.Sum256(src)
	contentID := "sha256:" + hex.EncodeToString(sum[:])
	switch {
	case out.Refuse != "":
		r.unsupported(out.Refuse, out.Notes...)
		return nil
	case len(out.Parts) > 0:
		var total int64
		for _, p := range out.Parts {
			total += int64(b64Len(p.Data))
		}
		if total > r.lim.MaxMediaBytes {
			return tooLarge("media", r.lim.MaxMediaBytes, total)
		}
		r.media(conv.ID(), out, contentID)
		return nil
	}
	r.tailNotes = append(r.tailNotes, out.Notes...)
	r.phase = PhaseScan
	sc, err := r.scan(bytes.NewReader(out.Text), int64(len(out.Text)), false)
	if err != nil {
		return err
	}
	if sc.encoding != nil {
		return r.failf(CodeExtensionFailed, PhaseConversion, &NoteData{Extension: "converter", ID: conv.ID(), Phase: string(PhaseConversion)},
			"the %s converter produced text that is not UTF-8", conv.ID())
	}
	mime := out.MimeType
	if mime == "" {
		mime = "text/plain"
	}
	r.finish(sc, &Conversion{Converter: conv.ID(), MimeType: mime})
	r.res.Observation.ContentID = ptr(contentID)
	r.res.Observation.ID = observationID(r.file, r.res.Observation, r.res.Request)
	if !sc.reachedEnd {
		r.res.Totals.Bytes = sc.scanned
	}
	return nil
}

func baseName(target string) string {
	if i := strings.LastIndexByte(target, '/'); i >= 0 {
		return target[i+1:]
	}
	return target
}

// media makes the result a media one.
func (r *reader) media(converter string, out Converted, contentID string) {
	res := r.res
	h := sha256.New()
	for _, p := range out.Parts {
		fmt.Fprintf(h, "%s\x00%s\x00", p.MediaType, p.Data)
	}
	obs := &Observation{StatID: statID(r.file), ContentID: ptr(contentID), ViewID: "sha256:" + hex.EncodeToString(h.Sum(nil)),
		ObservedAt: r.opts.Now().UTC().Format(time.RFC3339Nano)}
	obs.ID = observationID(r.file, obs, res.Request)
	*res = Result{Tool: "read", Status: StatusMedia, Request: res.Request, File: r.file, Classification: res.Classification,
		Conversion: &Conversion{Converter: converter, MimeType: out.Parts[0].MediaType}, Parts: out.Parts, Observation: obs}
	res.Notes = append(append(append([]Note{}, out.Notes...), r.tailNotes...), r.allowNotes...)
}

// b64Len is the number of bytes the padded standard base64 s decodes to.
func b64Len(s string) int {
	n := len(s) / 4 * 3
	switch {
	case strings.HasSuffix(s, "=="):
		n -= 2
	case strings.HasSuffix(s, "="):
		n--
	}
	return n
}
