package read

import (
	"context"
	"io/fs"
	"time"

	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Limits bound a read. A zero field takes its default.
type Limits struct {
	MaxLines            int   // lines in a view; the default and ceiling of limit (2000)
	MaxViewBytes        int   // UTF-8 source bytes in a view, gutter excluded (50 KiB)
	MaxCharsPerLine     int   // characters of one line shown; longer lines are clamped (2000)
	MaxScanBytes        int64 // bytes scanned to count lines and hash content (64 MiB)
	SampleBytes         int   // bytes the classifiers see (8 KiB)
	MaxDirectoryEntries int   // entries of a directory listing (200)
	MaxSuggestions      int   // names suggested for a missing path (5)
	MaxConvertBytes     int64 // input of a converter (64 MiB)
	MaxMediaBytes       int64 // media a converter may return (5 MiB)
}

// DefaultLimits are the limits of a read unless configured.
var DefaultLimits = Limits{
	MaxLines:            2000,
	MaxViewBytes:        50 << 10,
	MaxCharsPerLine:     2000,
	MaxScanBytes:        64 << 20,
	SampleBytes:         8 << 10,
	MaxDirectoryEntries: 200,
	MaxSuggestions:      5,
	MaxConvertBytes:     64 << 20,
	MaxMediaBytes:       5 << 20,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick64 := func(v *int64, def int64) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&l.MaxLines, d.MaxLines)
	pick(&l.MaxViewBytes, d.MaxViewBytes)
	pick(&l.MaxCharsPerLine, d.MaxCharsPerLine)
	pick64(&l.MaxScanBytes, d.MaxScanBytes)
	pick(&l.SampleBytes, d.SampleBytes)
	pick(&l.MaxDirectoryEntries, d.MaxDirectoryEntries)
	pick(&l.MaxSuggestions, d.MaxSuggestions)
	pick64(&l.MaxConvertBytes, d.MaxConvertBytes)
	pick64(&l.MaxMediaBytes, d.MaxMediaBytes)
	return l
}

// Options configure a read. The zero value reads with DefaultLimits, the
// default classifiers and converters, no resolver, no authorizer and no
// token budget.
type Options struct {
	Limits Limits

	// Classifiers decide from a sample what the content is; the first with
	// an opinion wins. Nil means DefaultClassifiers().
	Classifiers []Classifier
	// Converters turn content a classifier refused into text or media; the
	// first that accepts converts. Nil means DefaultConverters().
	Converters []Converter
	// Directories lists a directory as text; nil means DirectoryListing.
	// NoDirectories refuses directories as NOT_A_FILE instead.
	Directories   DirectoryLister
	NoDirectories bool
	// Resolver may rewrite a path that is not found (nil: none).
	Resolver Resolver
	// Authorizer allows or denies the read of an opened file (nil: allow).
	Authorizer Authorizer
	// Budget, when set, makes a fresh ViewBudget for each read: the view
	// stops at the first row it refuses. Tokens(b) is the o200k_base one.
	Budget func() ViewBudget

	// Fit, when set, bounds the result's size as the caller shows it.
	Fit *Fit

	// Now gives observation times (nil: time.Now).
	Now func() time.Time
}

// Sample is what a classifier sees of a file.
type Sample struct {
	Name string // base name of the resolved file
	Head []byte // the first SampleBytes bytes
	Size int64  // size from stat
	EOF  bool   // Head is the whole file
}

// Verdict is a classifier's decision.
type Verdict struct {
	Kind       string // "text" or "unsupported"
	Code       string // unsupported: the code, e.g. PDF
	MimeType   string
	Confidence string // high, medium or low
	Reasons    []string
	Notes      []Note // e.g. utf8-bom
}

// Classifier decides from a sample what a file is.
type Classifier interface {
	ID() string
	// Classify returns false when it has no opinion.
	Classify(s Sample) (Verdict, bool)
}

// Converted is what a converter produced: text to scan as lines, or media
// parts, or a refusal (Refuse non-empty: status unsupported with that
// code).
type Converted struct {
	Text     []byte
	MimeType string
	Parts    []MediaPart
	Notes    []Note
	Refuse   string
}

// Converter turns content a classifier refused into text or media.
type Converter interface {
	ID() string
	// Accepts reports whether it converts content classified as c.
	Accepts(c Classification, name string) bool
	// Convert converts src, the whole file (at most MaxConvertBytes).
	Convert(ctx context.Context, src []byte, name string) (Converted, error)
}

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	Name string
	Dir  bool
}

// DirectoryLister turns a directory into the text of its listing: one entry
// per line, at most max entries, and whether entries were left out.
type DirectoryLister interface {
	List(ctx context.Context, dir fs.ReadDirFile, max int) (text []byte, truncated bool, err error)
}

// Resolver may rewrite a path that was not found into one that exists,
// with a note (e.g. path-repaired). It returns "" to leave it missing.
type Resolver interface {
	Resolve(ctx context.Context, root *workspace.Root, path string) (string, *Note)
}

// AuthRequest is what an authorizer decides on.
type AuthRequest struct {
	Request Request
	File    FileInfo
	IsDir   bool
}

// Decision is an authorizer's answer. A denial's note keeps its message
// and data; its code becomes denied (the authorizer's code moves to
// data.source). An allow note is added to the result's notes.
type Decision struct {
	Allow bool
	Note  *Note
}

// Authorizer allows or denies the read of an opened file.
type Authorizer interface {
	Authorize(ctx context.Context, req AuthRequest) Decision
}

// ViewBudget decides whether one more row may join the view. A read makes
// a fresh one (Options.Budget) and offers it each row in order, as printed
// in the rows format: LINE:HASH TEXT and LF.
type ViewBudget interface {
	Admit(row []byte) bool
}

// Tokens returns a budget factory for the token admission rule b, counted
// in o200k_base tokens over the rows as printed (rows.Admitter).
func Tokens(b rows.Budget) func() ViewBudget {
	return func() ViewBudget { return &tokenBudget{adm: rows.NewAdmitter(discard{}, b)} }
}

type tokenBudget struct{ adm *rows.Admitter }

func (t *tokenBudget) Admit(row []byte) bool {
	ok, _ := t.adm.Admit(row) // discard never fails
	return ok
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
