/* libFuzzer target: the znode path check (zkr__path_check), which every
 * zkr_ call applies to the caller's path before anything else, compared
 * with a plain reference of ZooKeeper's rules as bytes (PathUtils.validatePath): absolute, "/" alone or no trailing '/',
 * no empty, "." or ".." component, no control byte (0x01-0x1f, 0x7f).
 * The input is cut at its first NUL, as C strings are.  The server also
 * refuses some Unicode ranges (C1 controls, surrogates, U+FFF0-U+FFFF);
 * zkroute leaves those to the server, which answers ZBADARGUMENTS. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/path.h"
#include "zkroute.h"

static int reference(const char *p) {
  size_t n = strlen(p);
  if (n == 0 || p[0] != '/') return 0;
  if (n == 1) return 1;
  if (p[n - 1] == '/') return 0;
  const char *seg = p + 1;
  for (const char *c = p + 1;; c++) {
    if (*c == '/' || *c == '\0') {
      size_t len = (size_t)(c - seg);
      if (len == 0) return 0;
      if (len == 1 && seg[0] == '.') return 0;
      if (len == 2 && seg[0] == '.' && seg[1] == '.') return 0;
      if (*c == '\0') return 1;
      seg = c + 1;
    } else if ((unsigned char)*c < 0x20 || *c == 0x7f) {
      return 0;
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  int rc = zkr__path_check(s);
  if (rc != ZOK && rc != ZBADARGUMENTS) abort();
  if ((rc == ZOK) != reference(s)) abort();
  free(s);
  return 0;
}
