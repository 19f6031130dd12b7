/* parse.c times tree-sitter's own C parser, with no Go in the way, over a
 * list of Python files: the floor under any tree-sitter outline of them.
 * bench/tsparse.sh builds it against the sources in the Go module cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tree_sitter/api.h"
const TSLanguage *tree_sitter_python(void);
int main(int argc, char **argv) {
  FILE *list = fopen(argv[1], "r");
  char path[4096];
  TSParser *p = ts_parser_new();
  ts_parser_set_language(p, tree_sitter_python());
  long total = 0; struct timespec a, b; double secs = 0;
  while (fgets(path, sizeof path, list)) {
    path[strcspn(path, "\n")] = 0;
    FILE *f = fopen(path, "rb"); if (!f) continue;
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char *buf = malloc(n + 1); fread(buf, 1, n, f); fclose(f);
    clock_gettime(CLOCK_MONOTONIC, &a);
    TSTree *t = ts_parser_parse_string(p, NULL, buf, n);
    ts_tree_delete(t);
    clock_gettime(CLOCK_MONOTONIC, &b);
    secs += (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    total += n; free(buf);
  }
  printf("%ld bytes in %.3fs = %.1f MB/s\n", total, secs, total / secs / 1e6);
}
