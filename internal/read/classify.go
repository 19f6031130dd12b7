package read

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"
)

// DefaultClassifiers are, in order: images, PDF, Office documents,
// notebooks, other binary content, UTF-8 text, and the fallback that calls
// anything else an unknown encoding.
func DefaultClassifiers() []Classifier {
	return []Classifier{
		classifierFunc{"image", classifyImage},
		classifierFunc{"pdf", classifyPDF},
		classifierFunc{"office", classifyOffice},
		classifierFunc{"notebook", classifyNotebook},
		classifierFunc{"binary", classifyBinary},
		classifierFunc{"utf8", classifyUTF8},
		classifierFunc{"encoding", classifyUnknown},
	}
}

type classifierFunc struct {
	id string
	fn func(Sample) (Verdict, bool)
}

func (c classifierFunc) ID() string                        { return c.id }
func (c classifierFunc) Classify(s Sample) (Verdict, bool) { return c.fn(s) }

func refuse(code, mime, reason string) (Verdict, bool) {
	return Verdict{Kind: "unsupported", Code: code, MimeType: mime, Confidence: "high", Reasons: []string{reason}}, true
}

// imageType names the image format of a file's first bytes, or "".
func imageType(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

func classifyImage(s Sample) (Verdict, bool) {
	if t := imageType(s.Head); t != "" {
		return refuse(UnsupportedImage, t, t+" signature")
	}
	return Verdict{}, false
}

func classifyPDF(s Sample) (Verdict, bool) {
	if bytes.HasPrefix(s.Head, []byte("%PDF-")) {
		return refuse(UnsupportedPDF, "application/pdf", "%PDF- signature")
	}
	return Verdict{}, false
}

var zipMagic = []byte("PK\x03\x04")

// classifyOffice recognises OOXML documents: a zip whose first entries are
// [Content_Types].xml and word/, xl/ or ppt/ parts, or a zip named .docx,
// .xlsx or .pptx.
func classifyOffice(s Sample) (Verdict, bool) {
	if !bytes.HasPrefix(s.Head, zipMagic) {
		return Verdict{}, false
	}
	ext := strings.ToLower(path.Ext(s.Name))
	kinds := []struct{ dir, ext, mime string }{
		{"word/", ".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"xl/", ".xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		{"ppt/", ".pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
	}
	types := bytes.Contains(s.Head, []byte("[Content_Types].xml"))
	for _, k := range kinds {
		if types && bytes.Contains(s.Head, []byte(k.dir)) || ext == k.ext {
			return refuse(UnsupportedOffice, k.mime, "zip container with "+k.dir+" parts")
		}
	}
	return Verdict{}, false
}

func classifyNotebook(s Sample) (Verdict, bool) {
	if strings.ToLower(path.Ext(s.Name)) != ".ipynb" {
		return Verdict{}, false
	}
	if t := bytes.TrimLeft(s.Head, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Verdict{}, false
	}
	v, _ := refuse(UnsupportedNotebook, "application/x-ipynb+json", ".ipynb name and JSON content")
	v.Confidence = "medium"
	return v, true
}

func classifyBinary(s Sample) (Verdict, bool) {
	if bytes.HasPrefix(s.Head, zipMagic) {
		return refuse(UnsupportedBinary, "application/zip", "zip signature")
	}
	if i := bytes.IndexByte(s.Head, 0); i >= 0 {
		return refuse(UnsupportedBinary, "application/octet-stream", "NUL byte in the first bytes")
	}
	return Verdict{}, false
}

var bom = []byte("\xef\xbb\xbf")

// textTypes gives a few text files their own media type.
var textTypes = map[string]string{
	".svg":  "image/svg+xml",
	".json": "application/json",
	".md":   "text/markdown",
	".html": "text/html",
	".xml":  "application/xml",
	".csv":  "text/csv",
}

// classifyUTF8 takes a sample that is strict UTF-8 (but for a character
// cut at its end) as text. Invalid UTF-8 after the sample is found by the
// scan.
func classifyUTF8(s Sample) (Verdict, bool) {
	h := s.Head
	if !s.EOF {
		if i := lastStart(h); len(h) > 0 && !utf8.FullRune(h[i:]) && len(h)-i < utf8.UTFMax {
			h = h[:i]
		}
	}
	if !utf8.Valid(h) {
		return Verdict{}, false
	}
	mime := "text/plain"
	if t, ok := textTypes[strings.ToLower(path.Ext(s.Name))]; ok {
		mime = t
	}
	reason := "the whole file is valid UTF-8"
	if !s.EOF {
		reason = "the sample is valid UTF-8"
	}
	v := Verdict{Kind: "text", MimeType: mime, Confidence: "high", Reasons: []string{reason}}
	if bytes.HasPrefix(h, bom) {
		v.Notes = []Note{{Code: "utf8-bom", Severity: "info",
			Message: "the file starts with a UTF-8 byte order mark; it stays in line 1's text and hash"}}
	}
	return v, true
}

func classifyUnknown(s Sample) (Verdict, bool) {
	return refuse(UnsupportedUnknownEncoding, "application/octet-stream", "the sample is not valid UTF-8")
}

// unsupportedNote is the warning of a refused classification.
func unsupportedNote(code, name string) Note {
	return Note{Code: "unsupported-" + kebab(code), Severity: "warning",
		Message: name + " is " + contentName(code) + "; read shows UTF-8 text, notebooks, images and directories"}
}
