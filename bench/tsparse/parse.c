/* parse.c times tree-sitter's own C parser, with no Go in the way: the
 * floor under any tree-sitter outline of the same files. The grammar is
 * chosen by extension as inspect_file chooses it (.py .pyi Python; .ts .mts
 * .cts TypeScript; .tsx TSX; .js .jsx .mjs .cjs JavaScript).
 *
 *   parse -L LIST     parse every file named in LIST (one path a line) and
 *                     print the bytes and the time spent in the parser
 *   parse FILE...     parse the files and print nothing: one process per
 *                     file is timed from outside
 *   parse -P BYTES FILE...
 *                     the same, each file parsed in pieces of about BYTES,
 *                     each cut after the first line break past BYTES and
 *                     its tree freed before the next: the floor under
 *                     inspect_file's outline of a large file in pieces
 *                     (which cuts only before declarations, so its pieces
 *                     differ a little; the bytes parsed are the same)
 *
 * bench/tsparse.sh and bench/inspect.sh build it against the sources in the
 * Go module cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tree_sitter/api.h"
const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_typescript(void);
const TSLanguage *tree_sitter_tsx(void);
const TSLanguage *tree_sitter_javascript(void);

static const TSLanguage *grammar(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot) return NULL;
  if (!strcmp(dot, ".py") || !strcmp(dot, ".pyi")) return tree_sitter_python();
  if (!strcmp(dot, ".ts") || !strcmp(dot, ".mts") || !strcmp(dot, ".cts")) return tree_sitter_typescript();
  if (!strcmp(dot, ".tsx")) return tree_sitter_tsx();
  if (!strcmp(dot, ".js") || !strcmp(dot, ".jsx") || !strcmp(dot, ".mjs") || !strcmp(dot, ".cjs")) return tree_sitter_javascript();
  return NULL;
}

static TSParser *parser;
static long total;
static double secs;
static long piece; /* 0: the whole file at once */

static void parse(const char *path) {
  const TSLanguage *g = grammar(path);
  if (!g) return;
  FILE *f = fopen(path, "rb");
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n + 1);
  if (fread(buf, 1, n, f) != (size_t)n) n = 0;
  fclose(f);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  ts_parser_set_language(parser, g);
  for (long start = 0; start < n || start == 0;) {
    long end = n;
    if (piece > 0 && start + piece < n) {
      char *nl = memchr(buf + start + piece, '\n', n - start - piece);
      end = nl ? nl - buf + 1 : n;
    }
    TSTree *t = ts_parser_parse_string(parser, NULL, buf + start, end - start);
    ts_tree_delete(t);
    if (end == start) break;
    start = end;
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  secs += (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
  total += n;
  free(buf);
}

int main(int argc, char **argv) {
  parser = ts_parser_new();
  if (argc == 3 && !strcmp(argv[1], "-L")) {
    FILE *list = fopen(argv[2], "r");
    if (!list) return 1;
    char path[4096];
    while (fgets(path, sizeof path, list)) {
      path[strcspn(path, "\n")] = 0;
      parse(path);
    }
    printf("%ld bytes in %.3fs = %.1f MB/s\n", total, secs, total / secs / 1e6);
    return 0;
  }
  int i = 1;
  if (argc >= 3 && !strcmp(argv[1], "-P")) {
    piece = atol(argv[2]);
    i = 3;
  }
  for (; i < argc; i++) parse(argv[i]);
  return 0;
}
