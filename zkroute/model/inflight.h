/* The in-flight path set (zkr__inflight_*): the paths the handle's writes in
 * flight will change, one lookup per read (DESIGN.md section 3). */
#ifndef ZKR_INFLIGHT_H
#define ZKR_INFLIGHT_H

struct zkr__inflight *zkr__inflight_new(void);
void zkr__inflight_free(struct zkr__inflight *s);
int zkr__inflight_add(struct zkr__inflight *s, const char *path);
void zkr__inflight_remove(struct zkr__inflight *s, const char *path);
int zkr__inflight_contains(struct zkr__inflight *s, const char *path);

#endif
