/* The in-flight path set (zkr__inflight_*): the paths the handle's writes in
 * flight will change, one lookup per read (DESIGN.md section 3). */
#ifndef ZKR_INFLIGHT_H
#define ZKR_INFLIGHT_H

/* Init.  @locks none. */
struct zkr__inflight *zkr__inflight_new(void);
/* The close path (destroy).  @locks none. */
void zkr__inflight_free(struct zkr__inflight *s);
/* Routing, possibly under gate_mu.  @locks inflight's mu. */
int zkr__inflight_add(struct zkr__inflight *s, const char *path);
/* A completion's thread (zkr__router_op_done).  @locks inflight's mu. */
void zkr__inflight_remove(struct zkr__inflight *s, const char *path);
/* The application's thread (a read).  @locks inflight's mu. */
int zkr__inflight_contains(struct zkr__inflight *s, const char *path);

#endif
