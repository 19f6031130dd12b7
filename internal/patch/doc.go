// Package patch owns HPATCH/2, rowkit's edit language: parsing a script,
// resolving its LINE:HASH and text targets against an immutable baseline of
// the files it names, checking the result, and committing every changed
// file at once through the workspace's journalled transaction.
//
// The engine's contract is that it never edits a line the caller did not
// mean. A row whose hash no longer matches is relocated only on evidence
// independent of that row's own 16-bit hash (see relocate.go); anything
// else is rejected with current verified rows around the requested place,
// so that the caller can retry without reading the file again.
package patch
