/* The in-flight path set: the paths that writes of this handle, still in
 * flight, will change.  A read of such a path must go to the write session
 * (same-session FIFO gives read-your-writes); any other read may go to a
 * follower.  A chained hash table with per-path counts under one mutex: the
 * critical section is one hash and a short chain walk, and entries live only
 * while their writes are in flight, so the table stays small. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model/inflight.h"

#define BUCKETS 1024

typedef struct entry {
  struct entry *next;
  int count;
  char path[];
} entry_t;

struct zkr__inflight {
  pthread_mutex_t mu;
  _Atomic int size; /* entries; lets the common empty case skip the lock */
  entry_t *b[BUCKETS];
};

static unsigned hash(const char *s) {
  unsigned h = 2166136261u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h % BUCKETS;
}

struct zkr__inflight *zkr__inflight_new(void) {
  struct zkr__inflight *s = calloc(1, sizeof *s);
  if (s) pthread_mutex_init(&s->mu, NULL);
  return s;
}

void zkr__inflight_free(struct zkr__inflight *s) {
  if (!s) return;
  for (int i = 0; i < BUCKETS; i++)
    for (entry_t *e = s->b[i], *n; e; e = n) {
      n = e->next;
      free(e);
    }
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* Returns 0, or -1 when out of memory: the write then fails before it is
 * sent, since without its entry a read could miss it. */
int zkr__inflight_add(struct zkr__inflight *s, const char *path) {
  unsigned h = hash(path);
  pthread_mutex_lock(&s->mu);
  entry_t *e = s->b[h];
  while (e && strcmp(e->path, path) != 0) e = e->next;
  if (e) {
    e->count++;
  } else {
    size_t len = strlen(path) + 1;
    e = malloc(sizeof *e + len);
    if (e) {
      memcpy(e->path, path, len);
      e->count = 1;
      e->next = s->b[h];
      s->b[h] = e;
      s->size++;
    }
  }
  pthread_mutex_unlock(&s->mu);
  return e ? 0 : -1;
}

void zkr__inflight_remove(struct zkr__inflight *s, const char *path) {
  unsigned h = hash(path);
  pthread_mutex_lock(&s->mu);
  for (entry_t **pp = &s->b[h]; *pp; pp = &(*pp)->next) {
    entry_t *e = *pp;
    if (strcmp(e->path, path) != 0) continue;
    if (--e->count == 0) {
      *pp = e->next;
      free(e);
      s->size--;
    }
    break;
  }
  pthread_mutex_unlock(&s->mu);
}

int zkr__inflight_contains(struct zkr__inflight *s, const char *path) {
  if (s->size == 0) return 0;
  unsigned h = hash(path);
  pthread_mutex_lock(&s->mu);
  entry_t *e = s->b[h];
  while (e && strcmp(e->path, path) != 0) e = e->next;
  pthread_mutex_unlock(&s->mu);
  return e != NULL;
}
