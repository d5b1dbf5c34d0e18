/* Znode paths (zkr__path_*): ZooKeeper's rules for the paths a call names,
 * checked before anything is built.  Pure. */
/* No locks: pure functions of their arguments; the caller serialises. */
#ifndef ZKR_PATH_H
#define ZKR_PATH_H

/* ZOK, or ZBADARGUMENTS when path breaks ZooKeeper's rules
 * (PathUtils.validatePath); a sequential create's prefix may end in '/'. */
int zkr__path_check_mode(const char *path, int sequential);
/* The same for a path that names a node (not a sequential prefix). */
int zkr__path_check(const char *path);

#endif
