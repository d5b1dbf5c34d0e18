/* Intrusive doubly linked queues: the one list shape of the library's
 * objects.  An object that can sit in a queue embeds one
 * zkr__queue_link_t per queue (an operation has several: the write gate,
 * issue order, the outstanding list, ...), and the queue's owner holds a
 * zkr__queue_t.  Both are plain data: all zero is an empty queue and an
 * unlinked link, so a calloc'ed object needs no set-up, and neither
 * allocates.  Whether a link is in its queue is the owner's to know (a
 * flag beside it, under the same lock): a lone entry and an unlinked link
 * look alike.  No locking here; every queue names the lock that guards it
 * where it is declared. */
/* No locks: pure functions of their arguments; the caller serialises. */
#ifndef ZKR_QUEUE_H
#define ZKR_QUEUE_H

#include <stddef.h>

typedef struct zkr__queue_link {
  struct zkr__queue_link *next, *prev;
} zkr__queue_link_t;

typedef struct {
  zkr__queue_link_t *first, *last;
} zkr__queue_t;

/* The object that holds link as its member field. */
#define ZKR__QUEUE_DATA(link, type, field) ((type *)((char *)(link)-offsetof(type, field)))

/* Walks q from first to last; the body may not unlink l (use
 * ZKR__QUEUE_FOREACH_SAFE, which reads the next link first). */
#define ZKR__QUEUE_FOREACH(l, q) for (zkr__queue_link_t *l = (q)->first; l; l = l->next)
#define ZKR__QUEUE_FOREACH_SAFE(l, n, q)                                                           \
  for (zkr__queue_link_t *l = (q)->first, *n; l && (n = l->next, 1); l = n)

static inline int zkr__queue_empty(const zkr__queue_t *q) { return q->first == NULL; }

/* e goes in after `after`; `after` NULL: e goes first. */
static inline void zkr__queue_insert_after(zkr__queue_t *q, zkr__queue_link_t *after,
                                           zkr__queue_link_t *e) {
  e->prev = after;
  e->next = after ? after->next : q->first;
  if (e->next) e->next->prev = e;
  else q->last = e;
  if (after) after->next = e;
  else q->first = e;
}

static inline void zkr__queue_push(zkr__queue_t *q, zkr__queue_link_t *e) {
  zkr__queue_insert_after(q, q->last, e);
}

static inline void zkr__queue_push_front(zkr__queue_t *q, zkr__queue_link_t *e) {
  zkr__queue_insert_after(q, NULL, e);
}

/* e must be in q. */
static inline void zkr__queue_remove(zkr__queue_t *q, zkr__queue_link_t *e) {
  if (e->prev) e->prev->next = e->next;
  else q->first = e->next;
  if (e->next) e->next->prev = e->prev;
  else q->last = e->prev;
  e->prev = e->next = NULL;
}

/* The first link, taken off q; NULL when q is empty. */
static inline zkr__queue_link_t *zkr__queue_pop(zkr__queue_t *q) {
  zkr__queue_link_t *e = q->first;
  if (e) zkr__queue_remove(q, e);
  return e;
}

/* Moves every link of src, in order, to the end of dst; src is empty
 * after. */
static inline void zkr__queue_move(zkr__queue_t *dst, zkr__queue_t *src) {
  if (!src->first) return;
  if (dst->last) {
    dst->last->next = src->first;
    src->first->prev = dst->last;
  } else {
    dst->first = src->first;
  }
  dst->last = src->last;
  src->first = src->last = NULL;
}

#endif
