// Package read owns rowkit's one reader. Read is the bounded view (rowkit
// read, the MCP tool read_file): one read of a file or directory below a
// workspace root, returned as a typed Result whose every bound says what it
// left out. Stream is the same reader without the view (hread): the same
// open rules, classifiers and codes, its rows pushed to a rows.Sink whose
// token admission is the only bound; ReadKept reads a kept output the same
// way.
//
// A read goes through phases, each of which can fail with its own coded
// error (seed 003's table): input (validation), resolve (the path, with a
// resolver that may repair it and nearby-name suggestions when it is
// missing), open (confinement through workspace.Root, refusal of /dev,
// /proc and /sys and of FIFOs, sockets and devices without blocking),
// authorize (an optional policy), sampling (classifiers decide from the
// first bytes what the content is), conversion (notebooks to text, images
// to media, directories to listings), scan (the view of verified rows and a
// count and hash of everything up to the scan limit) and verification (the
// file must not have changed while it was read).
//
// Lines and their LINE:HASH identities come from rows.Scanner in both (the
// rules of every verified row): LF, CRLF or a lone CR ends a line, a BOM stays in line 1,
// text is strict UTF-8. The view stops at a line boundary at the first of
// the line limit, the byte limit and the optional token budget, never
// before its first line; memory stays flat for any file size.
package read
