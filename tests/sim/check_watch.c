/* Watcher accounting against a model of the stock C client, written here
 * from ZooKeeper's rules (zk_hashtable.c), not from the simulator's code:
 * - a read with a watcher registers its (watcher, context) pair when it
 *   completes: exists in the data table on ZOK and the exist table on
 *   ZNONODE, get in the data table on ZOK, get_children in the child table
 *   on ZOK; stock's table holds a pair once per path and table, and
 *   on one session the reads complete - register - in issue order.
 *   Through several sessions they complete out of that order, so each
 *   read's registration is kept with its op and state (a removal spares
 *   those of reads issued after it, an event fires those set before its
 *   change), and an event calls a pair once however many it has;
 * - a path event takes the pairs stock takes (created/changed: exist then
 *   data; child: child; deleted: child, exist, data; each table in the
 *   order its pairs were set, a pair once; an exists watch on a missing
 *   node whose read was answered after the deletion committed saw it
 *   gone, or not created yet, and is not fired by it), and each must be
 *   called once,
 *   in that order; a watcher called with no registration is a violation;
 *   the pairs taken are those the event's change fires: on one session
 *   that is every pair set, while through several a pair whose read saw
 *   the change may be set before an older read's, and waits for the next
 *   change (change_for) - of the changes the called pairs'
 *   registrations offer, one that answers the event's calls
 *   (choose_change); a read that saw the state before that change
 *   and completes while the pair it sets is still to be called set it
 *   before the event, on one session, and the event takes it;
 * - a session event goes to the global watcher and every registered pair,
 *   each once per transition;
 * - nothing after EXPIRED (or AUTH_FAILED): no watcher call, no answer from
 *   a server, and no watcher call for a closed handle;
 * - a removal covers the watches set by reads issued before it, those
 *   still in flight when it was issued too (the server registers them,
 *   then applies it); while it is in flight their events may come or not;
 * - no spurious event: the committed log changed the node (or its
 *   children) after the state the registering read saw, before the event;
 * - liveness: a registration still armed when the application closes the
 *   handle at the end of the run (healed, idle and connected for 2 s), set
 *   more than 2 s before, must not have missed a change committed more
 *   than 2 s before the close (a removal asked for excuses it; a handle
 *   closed mid-run may have been disconnected, so it is not judged). */
#include "simcheck.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

enum { T_DATA, T_EXIST, T_CHILD };

typedef struct went {
  char path[H_PATH];
  int pair, table, op, rm_pending;
  int64_t point;  /* mzxid / pzxid the read saw; -1: the node was absent */
  uint64_t t_reg; /* when the read completed */
  uint64_t t_inv; /* when the read was issued */
  int optional;   /* a call may have answered it already (take): the pair
                     may be called for it, or not */
  int64_t reg;    /* an exists watch on a missing node: the state of the
                     server that registered it (its ZNONODE's, from the
                     servers' record); -1 not known, or no longer: a
                     session event came since (a disconnection, whose
                     reconnection registers it again at a later state) */
  int64_t reg_lo; /* the state reg first held, kept after a session event:
                     a reconnection registers the watch again at a state
                     no older (ZooKeeperServer.processConnectRequest
                     refuses a client that has seen a later zxid than the
                     server's), so a creation at or before it never fires
                     the watch; -1 not known */
} went_t;

typedef struct group {
  char path[H_PATH];
  int type, n, next;
  int64_t cz; /* the change it reports (change_for); INT64_MAX unknown */
  went_t *e;
} group_t;

/* ---- the log by path ---- */

typedef struct lent {
  int64_t zxid;
  uint64_t t;
  int kind;
  const char *path;
  int child; /* a change of a child of the indexed path */
} lent_t;

typedef struct lmap {
  char **key;
  lent_t **v;
  int *n, *cap;
  size_t size;
} lmap_t;

static uint64_t hs(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ULL;
  return h;
}

static size_t slot(lmap_t *m, const char *k) {
  size_t j = hs(k) & (m->size - 1);
  while (m->key[j] && strcmp(m->key[j], k)) j = (j + 1) & (m->size - 1);
  return j;
}

static void ladd(lmap_t *m, const char *k, lent_t e) {
  size_t j = slot(m, k);
  if (!m->key[j]) m->key[j] = strdup(k);
  if (m->n[j] == m->cap[j]) {
    m->cap[j] = m->cap[j] ? 2 * m->cap[j] : 8;
    m->v[j] = realloc(m->v[j], (size_t)m->cap[j] * sizeof **m->v);
  }
  m->v[j][m->n[j]++] = e;
}

static void lbuild(const hist_t *h, lmap_t *m) {
  m->size = 64;
  while (m->size < 4 * (size_t)h->nsubs + 8) m->size *= 2;
  m->key = calloc(m->size, sizeof *m->key);
  m->v = calloc(m->size, sizeof *m->v);
  m->n = calloc(m->size, sizeof *m->n);
  m->cap = calloc(m->size, sizeof *m->cap);
  for (int i = 0; i < h->nlog; i++) {
    const htxn_t *t = &h->log[i];
    for (int k = 0; k < t->n; k++) {
      const hlsub_t *s = &h->subs[t->first + k];
      ladd(m, s->path, (lent_t){t->zxid, t->t_commit, s->kind, s->path, 0});
      if (s->kind == H_CREATE || s->kind == H_DELETE) {
        char parent[H_PATH];
        snprintf(parent, sizeof parent, "%s", s->path);
        char *sl = strrchr(parent, '/');
        if (sl == parent) sl[1] = '\0';
        else if (sl) *sl = '\0';
        ladd(m, parent, (lent_t){t->zxid, t->t_commit, s->kind, s->path, 1});
      }
    }
  }
}

static void lfree(lmap_t *m) {
  for (size_t j = 0; j < m->size; j++) {
    free(m->key[j]);
    free(m->v[j]);
  }
  free(m->key);
  free(m->v);
  free(m->n);
  free(m->cap);
}

/* A change that could fire entry w, committed in (.., t]; with `after`,
 * only one committed at or before t that a registration set at point
 * must see. */
static int changed(lmap_t *m, const went_t *w, uint64_t t) {
  size_t j = slot(m, w->path);
  if (!m->key[j]) return 0;
  for (int i = 0; i < m->n[j]; i++) {
    const lent_t *e = &m->v[j][i];
    if (e->t > t) continue;
    switch (w->table) {
    case T_DATA:
      if (!e->child && e->zxid > w->point) return 1;
      break;
    case T_EXIST:
      if (!e->child && e->kind == H_CREATE) return 1;
      break;
    case T_CHILD:
      if (e->zxid > w->point && (e->child || e->kind == H_DELETE)) return 1;
      break;
    }
  }
  return 0;
}

/* The zxid of the change an event of type reports to entry w: the first
 * committed change after the state w's read saw that fires w's table with
 * that type (a set for CHANGED, a deletion of the node for DELETED, a
 * child created or deleted - or the node deleted - for CHILD); for an
 * exists watch on a missing node and CREATED, the latest creation
 * committed at or before the event (t).  INT64_MAX when it cannot be told
 * (an exists watch on a missing node and another event; no such change
 * yet). */
static int64_t change_for(lmap_t *m, const went_t *w, int type, uint64_t t) {
  size_t j = slot(m, w->path);
  int64_t best = INT64_MAX;
  if (!m->key[j]) return best;
  if (w->table == T_EXIST) {
    /* An exists watch on a missing node saw no zxid.  The creation that
     * fired it committed before its event: the latest one then is taken,
     * and the data table's pairs whose read saw that incarnation were set
     * after it (on one session their replies come after the event) - the
     * latest, not the first after the read, so that no pair an earlier
     * creation fires is excused. */
    if (type != ZOO_CREATED_EVENT) return best;
    if (w->reg >= 0) {
      /* Its registration's state is known: ZooKeeper fires it at the
       * first creation after that state (DataTree.createNode,
       * WatchManager.triggerWatch removes it), whichever came later. */
      int64_t first = INT64_MAX;
      for (int i = 0; i < m->n[j]; i++) {
        const lent_t *e = &m->v[j][i];
        if (!e->child && e->kind == H_CREATE && e->zxid > w->reg && e->t <= t && e->zxid < first)
          first = e->zxid;
      }
      return first;
    }
    /* Registered again at a state not known, but no older than reg_lo:
     * a creation at or before reg_lo is not the one that fired it. */
    int64_t last = -1;
    for (int i = 0; i < m->n[j]; i++) {
      const lent_t *e = &m->v[j][i];
      if (!e->child && e->kind == H_CREATE && e->t <= t && e->zxid > last) last = e->zxid;
    }
    return last > w->reg_lo ? last : best;
  }
  uint64_t best_t = UINT64_MAX;
  for (int i = 0; i < m->n[j]; i++) {
    const lent_t *e = &m->v[j][i];
    if (e->zxid <= w->point || e->zxid >= best) continue;
    int fits = type == ZOO_CHANGED_EVENT   ? !e->child && e->kind == H_SET
               : type == ZOO_DELETED_EVENT ? !e->child && e->kind == H_DELETE
               : type == ZOO_CHILD_EVENT   ? e->child || e->kind == H_DELETE
                                           : 0;
    if (fits) best = e->zxid, best_t = e->t;
  }
  /* A CHANGED event (t: when it came, 0 unknown) reports no set committed
   * after it.  With none committed by then after the state w's read saw,
   * it is a reconnect's answer: ZooKeeper's DataTree.setWatches fires
   * NodeDataChanged for a data watch when the node's mzxid is above the
   * session's relativeZxid - a node deleted and created again while the
   * session was away, whose mzxid is that creation's (or a later set's).
   * The change it reports is the node's latest committed then: a pair
   * whose read saw that incarnation was set after it, and is not fired.
   * (Taking the first set after w's state, committed after the event, made
   * every pair of the data table one it fires: routed seed 47437.) */
  if (type == ZOO_CHANGED_EVENT && t && w->table == T_DATA && best_t > t) {
    int64_t last = -1;
    for (int i = 0; i < m->n[j]; i++) {
      const lent_t *e = &m->v[j][i];
      if (!e->child && e->kind != H_DELETE && e->zxid > w->point && e->t <= t && e->zxid > last)
        last = e->zxid;
    }
    if (last >= 0) best = last;
  }
  return best;
}

/* The latest change of path committed at or before t that fires a
 * registration of its data or child table with type (as change_for
 * fits them); -1 when none. */
static int64_t last_change(lmap_t *m, const char *path, int type, uint64_t t) {
  size_t j = slot(m, path);
  int64_t last = -1;
  if (!m->key[j]) return last;
  for (int i = 0; i < m->n[j]; i++) {
    const lent_t *e = &m->v[j][i];
    if (e->t > t || e->zxid <= last) continue;
    int fits = type == ZOO_CHANGED_EVENT   ? !e->child && e->kind == H_SET
               : type == ZOO_DELETED_EVENT ? !e->child && e->kind == H_DELETE
               : type == ZOO_CHILD_EVENT   ? e->child || e->kind == H_DELETE
                                           : 0;
    if (fits) last = e->zxid;
  }
  return last;
}

/* When the change at zxid cz on path committed; UINT64_MAX when it is not
 * one of path's. */
static uint64_t commit_t(lmap_t *m, const char *path, int64_t cz) {
  size_t j = slot(m, path);
  if (!m->key[j]) return UINT64_MAX;
  for (int i = 0; i < m->n[j]; i++)
    if (m->v[j][i].zxid == cz && !m->v[j][i].child) return m->v[j][i].t;
  return UINT64_MAX;
}

/* The node exists after every change committed at or before t. */
static int exists_at(lmap_t *m, const char *path, uint64_t t) {
  size_t j = slot(m, path);
  int ex = 0;
  if (!m->key[j]) return 0;
  for (int i = 0; i < m->n[j]; i++) {
    const lent_t *e = &m->v[j][i];
    if (e->t > t || e->child) continue;
    ex = e->kind != H_DELETE;
  }
  return ex;
}

/* A deletion of path after the state at point, at or before zxid and
 * committed at or before t. */
static int deleted_by(lmap_t *m, const char *path, int64_t point, int64_t zxid, uint64_t t) {
  size_t j = slot(m, path);
  if (!m->key[j]) return 0;
  for (int i = 0; i < m->n[j]; i++) {
    const lent_t *e = &m->v[j][i];
    if (!e->child && e->kind == H_DELETE && e->zxid > point && e->zxid <= zxid && e->t <= t)
      return 1;
  }
  return 0;
}

/* ... committed at or before t, whatever its zxid. */
static int deleted_between(lmap_t *m, const char *path, int64_t point, uint64_t t) {
  return deleted_by(m, path, point, INT64_MAX, t);
}

/* Whether o's ZNONODE came from a state before any deletion of its path
 * after point: some server served a read of the path that found no node
 * while o was in flight, and every such read came from such a state (a
 * ZNONODE carries no zxid; the servers' record says which state each
 * answer came from).  Any read of the path of o's kind, with a watch as
 * o set one or without, served in that time counts - o's own among them
 * (its request is not known by name) - so a newer answer is never taken
 * for an older one. */
static int none_older(const hist_t *h, lmap_t *m, const hop_t *o, int64_t point) {
  int found = 0;
  for (int i = 0; i < h->nnones; i++) {
    const hnone_t *x = &h->nones[i];
    if (x->t < o->t_inv || x->t > o->t_cmp || strcmp(x->path, o->path) != 0 || x->kind != o->kind ||
        x->watch != (o->pair >= 0))
      continue;
    if (deleted_by(m, o->path, point, x->zxid, UINT64_MAX)) return 0;
    found = 1;
  }
  return found;
}

/* The state of the server that answered o, a watched exists, ZNONODE:
 * the one state every watched exists of o's path served while o was in
 * flight came from (o's own among them); -1 when none was recorded or
 * they came from different states (which was o's is not known). */
static int64_t none_state(const hist_t *h, const hop_t *o) {
  int64_t st = -1;
  for (int i = 0; i < h->nnones; i++) {
    const hnone_t *x = &h->nones[i];
    if (x->t < o->t_inv || x->t > o->t_cmp || strcmp(x->path, o->path) != 0 ||
        x->kind != H_EXISTS || !x->watch)
      continue;
    if (st >= 0 && st != x->zxid) return -1;
    st = x->zxid;
  }
  return st;
}

/* ---- the stock client's tables ---- */

typedef struct tabs {
  went_t *e;
  int n, cap;
} tabs_t;

/* Every read's registration is an entry of its own, even for a pair
 * already set on the path: stock's table holds the pair once, but which
 * of its reads that entry stands for depends on the order one session
 * would have completed them in (issue order), not the order they did.
 * A removal issued between two of them removes the first only; a change
 * between their states fires the first only, and the second sets the
 * pair anew (its read's reply came after that event). */
static void tadd(tabs_t *t, went_t w) {
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 16;
    t->e = realloc(t->e, (size_t)t->cap * sizeof *t->e);
  }
  t->e[t->n++] = w;
}

static int listed(const went_t *l, int n, int pair) {
  for (int i = 0; i < n; i++)
    if (l[i].pair == pair) return 1;
  return 0;
}

/* Whether l (n entries) lists w's pair already: a pair is called once,
 * in its first place - but a registration it must be called for, after
 * one it may be (optional), keeps a place of its own: the pair may be
 * called in either (one call answers both). */
static int covered(const went_t *l, int n, const went_t *w) {
  for (int i = 0; i < n; i++)
    if (l[i].pair == w->pair && (!l[i].optional || w->optional)) return 1;
  return 0;
}

/* The index of the first entry of l[from..n) for pair, past optional
 * entries of other pairs only; -1 when there is none. */
static int next_for(const went_t *l, int from, int n, int pair) {
  for (int i = from; i < n; i++) {
    if (l[i].pair == pair) return i;
    if (!l[i].optional) return -1;
  }
  return -1;
}

/* The index of the first entry of l[from..n) that must still be
 * called; -1 when there is none. */
static int first_mandatory(const went_t *l, int from, int n) {
  for (int i = from; i < n; i++)
    if (!l[i].optional) return i;
  return -1;
}

/* Whether a deletion at cz is not entry w's change: a set of the node (a
 * child created or deleted, for a child watch) committed after the state
 * w's read saw and before cz fired w's watch first, with CHANGED (CHILD),
 * on a server that held it while connected; the deletion fires only the
 * pairs set after that change.  (Through several sessions a read that
 * saw the older state may complete after one that saw the newer: routed
 * seeds 975, 1114, 2156, 2422, 2499, where the library calls that pair
 * for the set.) */
static int earlier_change(lmap_t *m, const went_t *w, int type, int64_t cz) {
  if (type != ZOO_DELETED_EVENT || cz == INT64_MAX || w->table == T_EXIST) return 0;
  int64_t first = change_for(m, w, w->table == T_CHILD ? ZOO_CHILD_EVENT : ZOO_CHANGED_EVENT, 0);
  return first < cz;
}

/* Stock's delivery list for (path, type), taken out of the tables: the
 * pairs the change at zxid cz fires.  On one stock session every pair in
 * the tables was set before the change (its read's reply came before the
 * event); through several sessions a read that saw a state at or after cz
 * may complete - set its pair - before an older read's pair, and the
 * change does not fire it: it stays in the table for the next one. */
static int take(lmap_t *m, tabs_t *t, const char *path, int type, int64_t cz, uint64_t cz_t,
                int64_t cz_late, int own_clean, went_t *out) {
  size_t sz = (size_t)(t->n + 1) * sizeof(went_t);
  went_t *node = malloc(sz), *exist = malloc(sz), *child = malloc(sz);
  int nn = 0, ne = 0, nc = 0;
  int want[3] = {type != ZOO_CHILD_EVENT, type != ZOO_CHILD_EVENT,
                 type == ZOO_CHILD_EVENT || type == ZOO_DELETED_EVENT};
  char *mine = calloc((size_t)t->n + 1, 1);
  uint64_t fired = 0;
  for (int i = 0; i < t->n; i++) {
    went_t *w = &t->e[i];
    /* An exists watch on a missing node that a deletion's event finds
     * (stock's collectWatchers takes the exist table for DELETED): on one
     * session its read completed before that event came, so it saw the
     * node before the deletion.  A read issued after the deletion
     * committed saw it gone: set after the change, it is not fired.  So
     * is one answered after the deletion committed: its ZNONODE is the
     * node gone (on one session the deletion's event came before that
     * reply, and zookeeper_process runs collectWatchers when an event
     * arrives, activateWatcher when a reply does) or not created yet (the
     * creation, before the deletion, fires it with CREATED first) - not
     * this deletion either way.  The same for a set's CHANGED
     * (collectWatchers takes the exist table too): an exists read issued
     * after the set committed is answered after its event - it found the
     * node deleted since, and waits for the next creation. */
    int after = w->table != T_EXIST         ? w->point >= cz
                : cz_t == UINT64_MAX        ? 0
                : type == ZOO_CREATED_EVENT ? w->reg_lo >= 0 && w->reg_lo >= cz
                : type == ZOO_DELETED_EVENT ? w->t_reg > cz_t
                : type == ZOO_CHANGED_EVENT ? w->t_inv > cz_t
                                            : 0;
    if (strcmp(w->path, path) || !want[w->table] || after ||
        (own_clean && earlier_change(m, w, type, cz)))
      continue;
    mine[i] = 1;
    fired |= 1ULL << (w->pair & 63);
  }
  /* A pair this change fires, set again by a read that completed before
   * (issued later) and saw a state newer than the change but older than
   * one committed before the event: one session would have fired the
   * first and had the second fire for the newer change - a second call,
   * after the first; through several the reads came out of issue order,
   * and one call may answer both registrations.  Either is the stock
   * client's: the second stays, optional - the pair may be called for it
   * in a later change's turn, or not (sim seed 14198: called twice; 697
   * and 182 --idle-park 300: once). */
  /* The same for an exists watch on a missing node that this CREATED
   * fires by an older registration, set again by a read served after
   * the creation (reg_lo) and since then through a session event (its
   * state no longer known, reg): one session would have fired the first
   * and had the second fire for the next creation (DataTree.setWatches
   * re-adds it, the next createNode fires it); through several sessions
   * the call may come after the second read's reply and answer both, as
   * the checker took it before reg_lo - the pair may be called again for
   * the next creation, or not (routed --io-loss 5 seed 9649).  Without a
   * session event it stays owed (watch_exists_state_unknown_from_a_
   * disconnection). */
  for (int i = 0; i < t->n; i++) {
    went_t *w = &t->e[i];
    if (mine[i] || !want[w->table] || !(fired >> (w->pair & 63) & 1) || strcmp(w->path, path))
      continue;
    if (w->table != T_EXIST ? w->point < cz_late : type == ZOO_CREATED_EVENT && w->reg < 0)
      mine[i] = 2; /* in its place in the list, and kept */
  }
  int j = 0;
  for (int i = 0; i < t->n; i++) {
    went_t *w = &t->e[i];
    if (mine[i] == 2) w->optional = 1;
    if (mine[i] != 1) t->e[j++] = *w;
    if (!mine[i]) continue;
    /* a pair set again by another read of the path: called once, in
     * its first registration's place (covered) */
    if (w->table == T_DATA) {
      if (!covered(node, nn, w)) node[nn++] = *w;
    } else if (w->table == T_EXIST) exist[ne++] = *w;
    else if (w->table == T_CHILD) child[nc++] = *w;
  }
  t->n = j;
  free(mine);
  int n = 0;
  went_t *all = malloc(sz * 3);
  for (int i = 0; i < nn; i++) all[n++] = node[i];
  int ne2 = 0, nc2 = 0;
  for (int i = 0; i < ne; i++)
    if (!covered(all, n, &exist[i]) && !covered(exist, ne2, &exist[i])) exist[ne2++] = exist[i];
  for (int i = 0; i < ne2; i++) all[n++] = exist[i];
  for (int i = 0; i < nc; i++)
    if (!covered(all, n, &child[i]) && !covered(child, nc2, &child[i])) child[nc2++] = child[i];
  /* order: child, exist, data */
  int k = 0;
  for (int i = 0; i < nc2; i++) out[k++] = child[i];
  for (int i = 0; i < ne2; i++) out[k++] = exist[i];
  for (int i = 0; i < nn; i++) out[k++] = node[i];
  free(node);
  free(exist);
  free(child);
  free(all);
  return k;
}

/* A registration by a read that saw the state before the change of an
 * open group (path, a table its event takes), whose pair that group has
 * still to call: on one session the read's reply came before that
 * event, set the pair again (one registration per path and table) and the
 * event takes it - the pair holds no such watch after its call.  An
 * exists watch on a missing node saw no zxid, and is not judged so. */
static int taken_by_open_group(const group_t *groups, int ngroups, const went_t *w) {
  if (w->point < 0) return 0;
  for (int i = 0; i < ngroups; i++) {
    const group_t *gr = &groups[i];
    int takes = w->table == T_CHILD ? gr->type == ZOO_CHILD_EVENT || gr->type == ZOO_DELETED_EVENT
                                    : gr->type != ZOO_CHILD_EVENT;
    if (takes && gr->cz != INT64_MAX && w->point < gr->cz && !strcmp(gr->path, w->path) &&
        listed(gr->e + gr->next, gr->n - gr->next, w->pair))
      return 1;
  }
  return 0;
}

static const char *tname(int t) {
  return t == ZOO_CREATED_EVENT   ? "created"
         : t == ZOO_DELETED_EVENT ? "deleted"
         : t == ZOO_CHANGED_EVENT ? "changed"
         : t == ZOO_CHILD_EVENT   ? "child"
                                  : "session";
}

/* A removal (its call ZOK) covering the watch read r set in table, issued
 * after r and still in flight at event e: on one stock session the server
 * registers r's watch and then applies the removal, so the watch is
 * pending removal as one registered before the removal was issued is. */
static int rm_in_flight(const hist_t *h, const hop_t *r, int table, int e) {
  for (int k = 0; k < h->nops; k++) {
    const hop_t *o = &h->ops[k];
    if (o->kind != H_RMWATCH || o->call_rc != ZOK || o->gen != r->gen || o->ext) continue;
    if (o->id < r->id || o->e_inv >= e || (o->e_cmp >= 0 && o->e_cmp < e)) continue;
    int type_ok =
        o->version == ZWATCHTYPE_ANY || (o->version == ZWATCHTYPE_CHILD) == (table == T_CHILD);
    if (!strcmp(o->path, r->path) && type_ok && (o->mode == 1 || o->pair == r->pair)) return 1;
  }
  return 0;
}

/* The pairs called for one event: the call at e and the calls of gen g
 * with its path and type that follow it, up to any other call or
 * operation of g, or a pair called again.  Returns how many (at most max). */
static int calls_of(const hist_t *h, int e, int g, int *pairs, int max) {
  const hev_t *ev = &h->ev[e];
  int np = 0;
  for (int k = e; k < h->nev && np < max; k++) {
    const hev_t *x = &h->ev[k];
    if (x->type == E_INVOKE || x->type == E_COMPLETE) {
      if (h->ops[x->op].gen == g) break;
      continue;
    }
    if (x->type != E_WATCH || x->gen != g) continue;
    if (x->wtype != ev->wtype || strcmp(x->path, ev->path)) break;
    int again = 0;
    for (int i = 0; i < np; i++) again |= pairs[i] == x->pair;
    if (again) break;
    pairs[np++] = x->pair;
  }
  return np;
}

/* How the list the change at cz takes out of t answers the calls (pairs,
 * in order), each taken as one_gen takes it, t left as it is: the calls
 * it answers (*answered) and those it does not (returned; a call out of
 * order or for a pair it does not list), up to the call after which the
 * list owes no call - the group closes there, and the calls after it are
 * another event's; *rest: whether a pair is still owed a call after
 * them. */
static int fits_calls(lmap_t *m, const tabs_t *t, const char *path, int type, int64_t cz,
                      int own_clean, uint64_t tev, const int *pairs, int np, int *answered,
                      int *rest) {
  size_t sz = (size_t)(t->n + 1) * sizeof(went_t);
  tabs_t s = {malloc(sz), t->n, t->n + 1};
  memcpy(s.e, t->e, (size_t)t->n * sizeof *t->e);
  went_t *l = malloc(sz);
  int n = take(m, &s, path, type, cz, commit_t(m, path, cz), last_change(m, path, type, tev),
               own_clean, l);
  int next = 0, failed = 0;
  *answered = 0;
  for (int k = 0; k < np && (!k || first_mandatory(l, next, n) >= 0); k++) {
    int at = next_for(l, next, n, pairs[k]);
    if (at >= 0) ++*answered, next = at + 1;
    else failed++;
    if (at < 0 && !listed(l + next, n - next, pairs[k])) continue;
    int j = next;
    for (int i = next; i < n; i++)
      if (l[i].pair != pairs[k]) l[j++] = l[i];
    n = j;
  }
  *rest = first_mandatory(l, next, n) >= 0;
  free(s.e);
  free(l);
  return failed;
}

/* The change an event reports, when the one its first pair's registration
 * tells (*cz, *own_clean: change_for, earlier_change) leaves a pair
 * called for it unanswered: a pair's registrations may have seen
 * different incarnations of the node, and a change fires only the
 * registrations set before it.  Through several sessions a read answered
 * by a member far behind may complete after a read that saw the node
 * created again, and one event then calls the pairs of both: a
 * deletion's DELETED goes to every data watch set before it, whichever
 * incarnation its read saw, and a pair set twice is called once (routed
 * --io-loss 5 seed 9880: pair 3 set on the old node and the new, pair 5
 * on the new only; the old node's deletion fires no watch set on the
 * new).  Each registration of a called pair that saw a change offers its
 * change; the one leaving fewest calls unanswered, then answering most,
 * then leaving no pair owed a call, is taken if it does better than the
 * first pair's.  A call no change answers is still reported, and so is a
 * pair the change taken owes a call and that is never called. */
static void choose_change(const hist_t *h, int e, int g, lmap_t *m, const tabs_t *t, int64_t *cz,
                          int *own_clean) {
  const hev_t *ev = &h->ev[e];
  int pairs[64], ans, rest;
  int np = calls_of(h, e, g, pairs, 64);
  int failed =
      fits_calls(m, t, ev->path, ev->wtype, *cz, *own_clean, ev->t, pairs, np, &ans, &rest);
  if (!failed) return;
  int best_failed = failed, best_ans = ans, best_rest = 1, first_ans = ans;
  for (int p = 0; p < np; p++)
    for (int i = 0; i < t->n; i++) {
      const went_t *w = &t->e[i];
      int fits = ev->wtype == ZOO_CHILD_EVENT     ? w->table == T_CHILD
                 : ev->wtype == ZOO_DELETED_EVENT ? 1
                                                  : w->table != T_CHILD;
      if (!fits || w->pair != pairs[p] || strcmp(w->path, ev->path) || !changed(m, w, ev->t))
        continue;
      int64_t c = change_for(m, w, ev->wtype, ev->t);
      int clean = !earlier_change(m, w, ev->wtype, c);
      int f = fits_calls(m, t, ev->path, ev->wtype, c, clean, ev->t, pairs, np, &ans, &rest);
      if (f > failed || (f == failed && ans <= first_ans)) continue; /* no better */
      if (f < best_failed ||
          (f == best_failed && (ans > best_ans || (ans == best_ans && best_rest && !rest))))
        best_failed = f, best_ans = ans, best_rest = rest, *cz = c, *own_clean = clean;
    }
}

static void one_gen(const hist_t *h, int g, lmap_t *m, check_out_t *c) {
  tabs_t t = {0};
  group_t groups[16];
  int ngroups = 0;
  int dflt = h->gens[g].default_pair;
  int sess_state = 0, sess_open = 0, ended = 0;
  uint64_t sess_expected = 0, sess_allowed = 0, sess_got = 0;
  for (int e = 0; e < h->nev; e++) {
    const hev_t *ev = &h->ev[e];
    if (ev->type == E_INVOKE || ev->type == E_COMPLETE) {
      const hop_t *o = &h->ops[ev->op];
      if (o->gen != g || o->ext) continue;
      if (ev->type == E_INVOKE) {
        if (o->kind == H_RMWATCH && o->call_rc == ZOK) {
          for (int i = 0; i < t.n; i++) {
            went_t *w = &t.e[i];
            int type_ok = o->version == ZWATCHTYPE_ANY ||
                          (o->version == ZWATCHTYPE_CHILD) == (w->table == T_CHILD);
            if (!strcmp(w->path, o->path) && type_ok && (o->mode == 1 || w->pair == o->pair))
              w->rm_pending = 1;
          }
        }
        continue;
      }
      if (e != o->e_cmp) continue;
      if (ended && o->rc == ZOK)
        check_fail(c, CK_WATCH,
                   "op %d answered ZOK after the session ended (EXPIRED or AUTH_FAILED)", o->id);
      if (o->kind == H_RMWATCH && o->rc == ZOK) {
        /* On one session a read issued after the removal is served after
         * it: the watch it sets is not removed, whenever it completes. */
        int j = 0;
        for (int i = 0; i < t.n; i++) {
          went_t *w = &t.e[i];
          int type_ok = o->version == ZWATCHTYPE_ANY ||
                        (o->version == ZWATCHTYPE_CHILD) == (w->table == T_CHILD);
          if (!(!strcmp(w->path, o->path) && type_ok && (o->mode == 1 || w->pair == o->pair) &&
                w->op < o->id))
            t.e[j++] = *w;
        }
        t.n = j;
      }
      if (o->call_rc != ZOK) continue;
      /* ZooKeeper: a client sees the watch event for a znode it watches
       * before it sees the new data. */
      int rd = (o->kind == H_GET || o->kind == H_EXISTS || o->kind == H_CHILDREN) &&
               (o->rc == ZOK || o->rc == ZNONODE);
      for (int i = 0; rd && i < t.n; i++) {
        went_t *w = &t.e[i];
        if (w->rm_pending || w->optional || strcmp(w->path, o->path)) continue;
        int newer = 0;
        /* ZNONODE from a read issued before the pair's: on one session
         * it completes first, and may be the state before the node's
         * creation - newer only if a deletion after the pair's state
         * committed before it completed, and the answer did not come
         * from a server behind that deletion (none_older). */
        int gone = o->rc == ZNONODE &&
                   (o->id > w->op || (deleted_between(m, o->path, w->point, o->t_cmp) &&
                                      !none_older(h, m, o, w->point)));
        if (w->table == T_DATA && o->kind != H_CHILDREN)
          newer = gone || (o->rc == ZOK && o->mzxid > w->point);
        else if (w->table == T_EXIST && o->kind != H_CHILDREN)
          /* The node it found was created before the exists read that
           * found it missing was issued: that read saw it deleted
           * afterwards, and this one, through another session, an older
           * state - not a change the watch missed. */
          newer = o->rc == ZOK && !(commit_t(m, o->path, o->czxid) < w->t_inv);
        else if (w->table == T_CHILD && o->kind == H_CHILDREN)
          newer = gone || (o->rc == ZOK && o->pzxid > w->point);
        if (newer) {
          check_fail(c, CK_WATCH,
                     "op %d saw %s changed (rc %d, zxid %#llx) at %.3f s before pair %d's watch "
                     "(set by op %d) fired",
                     o->id, o->path, o->rc,
                     (unsigned long long)(o->kind == H_CHILDREN ? o->pzxid : o->mzxid),
                     (double)o->t_cmp / 1e9, w->pair, w->op);
          /* reported once, for each registration of the pair */
          for (int k = 0; k < t.n; k++)
            if (t.e[k].pair == w->pair && t.e[k].table == w->table && !strcmp(t.e[k].path, w->path))
              t.e[k].rm_pending = 1;
        }
      }
      if (o->pair < 0) continue;
      went_t w = {{0}, o->pair, -1, o->id, 0, -1, o->t_cmp, o->t_inv, 0, -1, -1};
      snprintf(w.path, sizeof w.path, "%s", o->path);
      if (o->kind == H_EXISTS && o->rc == ZOK) w.table = T_DATA, w.point = o->mzxid;
      else if (o->kind == H_EXISTS && o->rc == ZNONODE)
        w.table = T_EXIST, w.reg = w.reg_lo = none_state(h, o);
      else if (o->kind == H_GET && o->rc == ZOK) w.table = T_DATA, w.point = o->mzxid;
      else if (o->kind == H_CHILDREN && o->rc == ZOK) w.table = T_CHILD, w.point = o->pzxid;
      if (w.table >= 0) {
        w.rm_pending = rm_in_flight(h, o, w.table, e);
        if (!taken_by_open_group(groups, ngroups, &w)) tadd(&t, w);
        c->checked[CK_WATCH]++;
      }
      continue;
    }
    if (ev->type != E_WATCH) continue;
    if (ev->gen != g) {
      if (ev->gen < 0 && g == 0)
        check_fail(c, CK_WATCH, "watcher pair %d called (%s) at %.3f s for a closed handle",
                   ev->pair, tname(ev->wtype), (double)ev->t / 1e9);
      continue;
    }
    if (ev->wtype == ZOO_SESSION_EVENT) {
      if (!sess_open || ev->wstate != sess_state) {
        if (sess_open && (sess_expected & ~sess_got))
          check_fail(c, CK_WATCH, "session event %d missed watcher pairs %#llx", sess_state,
                     (unsigned long long)(sess_expected & ~sess_got));
        if (ended)
          check_fail(c, CK_WATCH, "session event %d at %.3f s after the session ended", ev->wstate,
                     (double)ev->t / 1e9);
        sess_open = 1;
        sess_state = ev->wstate;
        sess_got = 0;
        /* a pair whose registrations are all optional may hold no watch */
        sess_expected = sess_allowed = 1ULL << dflt;
        for (int i = 0; i < t.n; i++) {
          sess_allowed |= 1ULL << t.e[i].pair;
          if (!t.e[i].optional) sess_expected |= 1ULL << t.e[i].pair;
        }
      }
      /* A session event is a connection lost or made again: the server
       * dropped the lost connection's watches (DataTree.removeCnxn) and
       * the client sets them again on the next (SetWatches; DataTree.
       * setWatches re-adds an exists watch on a missing node silently), at
       * a state not known here - from the disconnection on, not only from
       * the CONNECTED: through several sessions a node event may come in
       * between (routed --io-loss 5 seed 5137).  Not at an older one: a
       * server behind the client's last zxid refuses it (reg_lo stays;
       * routed --io-loss 5 seed 3122: a read served after the handle's
       * delete is not fired by the creation before it). */
      for (int i = 0; i < t.n; i++)
        if (t.e[i].table == T_EXIST && t.e[i].t_reg <= ev->t) t.e[i].reg = -1;
      uint64_t bit = 1ULL << ev->pair;
      if (sess_got & bit)
        check_fail(c, CK_WATCH, "watcher pair %d got session event %d twice at %.3f s", ev->pair,
                   ev->wstate, (double)ev->t / 1e9);
      else if (!(sess_allowed & bit))
        check_fail(c, CK_WATCH, "watcher pair %d got session event %d at %.3f s but holds no watch",
                   ev->pair, ev->wstate, (double)ev->t / 1e9);
      sess_got |= bit;
      if (ev->wstate == ZOO_EXPIRED_SESSION_STATE || ev->wstate == ZOO_AUTH_FAILED_STATE) ended = 1;
      continue;
    }
    if (ended) {
      check_fail(c, CK_WATCH, "watcher pair %d called (%s %s) at %.3f s after the session ended",
                 ev->pair, tname(ev->wtype), ev->path, (double)ev->t / 1e9);
      continue;
    }
    c->checked[CK_WATCH]++;
    group_t *gr = NULL;
    for (int i = 0; i < ngroups && !gr; i++)
      if (groups[i].type == ev->wtype && !strcmp(groups[i].path, ev->path)) gr = &groups[i];
    if (!gr) {
      /* A call for a pair none of whose registrations saw a change
       * since: a spurious event, taken on its own so that the pairs
       * stock would have called with a real event are still expected
       * then.  Of several, the pair's is one that saw a change, of the
       * table the event's type tells the change of (the exist table for
       * CREATED, else the others), first issued (one session would have
       * registered it first). */
      int own = -1, own_rank = 0;
      for (int i = 0; i < t.n; i++) {
        went_t *w = &t.e[i];
        int fits = ev->wtype == ZOO_CHILD_EVENT     ? w->table == T_CHILD
                   : ev->wtype == ZOO_DELETED_EVENT ? 1
                                                    : w->table != T_CHILD;
        if (!fits || w->pair != ev->pair || strcmp(w->path, ev->path)) continue;
        int rank =
            2 * changed(m, w, ev->t) + ((w->table == T_EXIST) == (ev->wtype == ZOO_CREATED_EVENT));
        if (own < 0 || rank > own_rank || (rank == own_rank && w->op < t.e[own].op))
          own = i, own_rank = rank;
      }
      if (own >= 0 && own_rank < 2) {
        check_fail(c, CK_WATCH,
                   "pair %d: %s event on %s at %.3f s, but nothing changed after the state its "
                   "read (op %d) saw",
                   ev->pair, tname(ev->wtype), ev->path, (double)ev->t / 1e9, t.e[own].op);
        t.e[own] = t.e[--t.n];
        continue;
      }
      if (ngroups == 16) {
        free(groups[0].e);
        memmove(groups, groups + 1, 15 * sizeof *groups);
        ngroups--;
      }
      gr = &groups[ngroups++];
      memset(gr, 0, sizeof *gr);
      snprintf(gr->path, sizeof gr->path, "%s", ev->path);
      gr->type = ev->wtype;
      gr->e = malloc((size_t)(t.n + 1) * sizeof *gr->e);
      int64_t cz = own >= 0 ? change_for(m, &t.e[own], ev->wtype, ev->t) : INT64_MAX;
      /* The pair called saw no earlier change than cz: its call is that
       * change's, not one a reconnect reports for several missed at once
       * (stock's SetWatches answers a data watch on a node gone with
       * NodeDeleted, whatever sets it missed), and the pairs that an
       * earlier set (child change) fired are not taken. */
      int own_clean = own >= 0 && !earlier_change(m, &t.e[own], ev->wtype, cz);
      if (own >= 0) choose_change(h, e, g, m, &t, &cz, &own_clean);
      gr->cz = cz;
      gr->n = take(m, &t, ev->path, ev->wtype, cz, commit_t(m, ev->path, cz),
                   last_change(m, ev->path, ev->wtype, ev->t), own_clean, gr->e);
    }
    int at = next_for(gr->e, gr->next, gr->n, ev->pair);
    if (at >= 0) {
      /* one call answers every entry of the pair */
      int j = gr->next = at + 1;
      for (int i = gr->next; i < gr->n; i++)
        if (gr->e[i].pair != ev->pair) gr->e[j++] = gr->e[i];
      gr->n = j;
    } else if (listed(gr->e + gr->next, gr->n - gr->next, ev->pair)) {
      check_fail(c, CK_WATCH,
                 "%s event on %s at %.3f s: pair %d called before pair %d, which was set first",
                 tname(ev->wtype), ev->path, (double)ev->t / 1e9, ev->pair,
                 gr->e[first_mandatory(gr->e, gr->next, gr->n)].pair);
      /* take it out of the rest so that the others still line up */
      int j = gr->next;
      for (int i = gr->next; i < gr->n; i++)
        if (gr->e[i].pair != ev->pair) gr->e[j++] = gr->e[i];
      gr->n = j;
    } else {
      check_fail(c, CK_WATCH, "%s event on %s at %.3f s to pair %d, which %s", tname(ev->wtype),
                 ev->path, (double)ev->t / 1e9, ev->pair,
                 listed(gr->e, gr->next, ev->pair) ? "already had it (called twice)"
                                                   : "held no such watch");
    }
    if (first_mandatory(gr->e, gr->next, gr->n) < 0) {
      free(gr->e);
      *gr = groups[--ngroups];
    }
  }
  if (sess_open && (sess_expected & ~sess_got))
    check_fail(c, CK_WATCH, "session event %d missed watcher pairs %#llx", sess_state,
               (unsigned long long)(sess_expected & ~sess_got));
  for (int i = 0; i < ngroups; i++) {
    if (!ended && h->gens[g].ended != 1)
      check_fail(c, CK_WATCH, "%s event on %s: pair %d never called (of %d)", tname(groups[i].type),
                 groups[i].path,
                 groups[i].e[first_mandatory(groups[i].e, groups[i].next, groups[i].n)].pair,
                 groups[i].n);
    free(groups[i].e);
  }
  /* Liveness of what is still armed, when the application closed it. */
  if (h->gens[g].ended == 2 && h->gens[g].settled && !ended) {
    uint64_t limit = h->gens[g].t_ended > 2000000000ULL ? h->gens[g].t_ended - 2000000000ULL : 0;
    for (int i = 0; i < t.n; i++) {
      went_t *w = &t.e[i];
      if (w->rm_pending || w->optional || w->t_reg > limit) continue;
      int lost = w->table == T_EXIST ? exists_at(m, w->path, limit) : changed(m, w, limit);
      if (lost)
        check_fail(c, CK_WATCH,
                   "lost notification: pair %d's watch on %s (set by op %d, table %d) never fired "
                   "though the node changed",
                   w->pair, w->path, w->op, w->table);
    }
  }
  free(t.e);
}

void check_watch(const hist_t *h, check_out_t *c) {
  lmap_t m;
  lbuild(h, &m);
  for (int g = 0; g < h->ngens; g++) one_gen(h, g, &m, c);
  lfree(&m);
}
