/* Znode paths: the check every zkr_ call applies to the caller's path
 * before anything is built, so that a path the server would refuse is
 * refused at once, with the code the server gives (ZBADARGUMENTS).  Pure:
 * no handle, no I/O (its fuzz target compares it with a plain reference of
 * the rules). */
#include <string.h>

#include "model/path.h"
#include "zkroute.h"

/* ZooKeeper's path rules (PathUtils.validatePath): absolute, no empty,
 * "." or ".." component, no trailing '/' (except a sequential create's
 * prefix), no control characters. */
int zkr__path_check_mode(const char *path, int sequential) {
  if (!path || path[0] != '/') return ZBADARGUMENTS;
  size_t len = strlen(path);
  if (len == 1) return ZOK;
  if (path[len - 1] == '/' && !sequential) return ZBADARGUMENTS;
  for (const char *c = path + 1, *seg = path + 1;; c++) {
    if (*c == '/' || *c == '\0') {
      size_t n = (size_t)(c - seg);
      if (n == 0 && !(*c == '\0' && sequential)) return ZBADARGUMENTS;
      if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
        return ZBADARGUMENTS;
      if (*c == '\0') break;
      seg = c + 1;
    } else if ((unsigned char)*c < 0x20 || *c == 0x7f) {
      return ZBADARGUMENTS;
    }
  }
  return ZOK;
}

int zkr__path_check(const char *path) { return zkr__path_check_mode(path, 0); }
