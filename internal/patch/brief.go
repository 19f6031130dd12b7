package patch

// Brief is HPATCH/2 as a model's tool text teaches it (MCP edit, the
// router's hpatch): Language's rules in the fewest words that still say
// everything a model writes or reads back, since a tool's text is sent on
// every request. What a model never acts on (the journal, the wait for
// another edit, how a stale row may be relocated, line endings spelled
// out) is left to Language, which rowkit help patch shows.
const Brief = `An HPATCH/2 script, one command per line:
  in PATH            select a file
  new PATH           create a file and select it; ` + "`type VALUE`" + ` next sets its content
  type TARGET VALUE  replace TARGET ("" deletes it)
  add DEST VALUE     insert before DEST: a ROW, a text target or EOF
  mv PATH            move the selected file; rm deletes it
  type EOF VALUE     "" drops the final line break, "\n" adds one
TARGET is ROW (a LINE:HASH you were shown: the whole line), ROW..ROW, or [ROW] "TEXT" [N] (the first N exact matches of TEXT, from ROW on). VALUE is a JSON string, or <<PATCH, lines, then a line PATCH; a replaced row keeps its line ending.
A row that changed since you read it is refused with the current rows around it. A changed Go, Python, JS/TS or JSON file must still parse. All files change or none.
`
