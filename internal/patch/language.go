package patch

// Language describes HPATCH/2 to whoever writes a script, a person or a
// model: the one description that `rowkit help patch`, the MCP edit tool
// and the router's hpatch tool show, each with its own few words before
// and after it (where the script comes from, what the result looks like).
const Language = `An HPATCH/2 script is one command per line:

  in PATH              select an existing file
  new PATH             create a file (missing parent directories too) and select it
  mv PATH              move the selected file
  rm                   delete the selected file
  type TARGET VALUE    replace every span TARGET selects ("" deletes)
  add DEST VALUE       insert VALUE before DEST (ROW, a text target or EOF)
  type VALUE           initial content, directly after new
  type EOF VALUE       set the final terminator: "" drops it, "\n" adds one

TARGET is ROW (a verified row LINE:HASH: the whole line with its
terminator), ROW..ROW, or [ROW] "TEXT" [N] (the first N exact matches, from
ROW or from the start). VALUE is a JSON string, or <<PATCH followed by
literal lines and a line PATCH. A row replacement without a final
terminator keeps the target's (LF, CRLF, CR, or none for an unterminated
last line). Paths are relative to the workspace; paths with spaces may be
written bare or as JSON strings. Through a PATH that is a symlink, type and
add edit the file it leads to; mv and rm act on the link, as in a shell.

Copy LINE:HASH rows from what the reading commands printed. Every target
resolves against the files as they were when the script started. A stale
row is relocated only when two independent rows agree on the shift (both
ends of a range, or another target of the script); otherwise the script is
rejected with the current rows around the place, ready for the next
script. Every changed Go, Python, JavaScript/TypeScript or JSON file must
still parse (unless it did not before). All files are written at once, or
none, through a journal: after a crash the next edit in the workspace (or
rowkit recover) completes or rolls back the whole script. One edit commits
at a time in a workspace (another waits up to 10 s), and a file another
writer changed meanwhile is never overwritten: the script is rejected
row-stale with the file's fresh rows.
`
