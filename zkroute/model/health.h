/* Health (DESIGN.md section 6): per-member latency EWMA, median-relative
 * ejection from the read pool, probing of members that are out, and
 * reinstatement with a backoff.  Pure code: no I/O, no threads, no locks
 * (the caller holds whatever lock guards the members it passes in), and
 * time is always passed in as uint64_t nanoseconds from the caller's clock,
 * so the unit tests drive it with a fake clock.  docs/health.md is the long
 * form of this comment.
 *
 * The model
 *
 * - Latency.  Every completed sync+read pair and every successful probe is
 *   a sample in milliseconds.  The EWMA is a time-decayed mean: each sample
 *   has weight 1, and every weight halves each half_life_ms.  For evenly
 *   spaced samples that is the classic EWMA with alpha = 1 - 2^(-dt/H);
 *   unlike that formula, samples that complete at the same instant (dt = 0,
 *   common under load) each still count, and after a long silence the old
 *   mean weighs almost nothing, so the next sample nearly replaces it.
 *
 * - Ejection.  A member in the pool that has at least min_samples samples
 *   in its current EWMA is ejected when its EWMA exceeds
 *       max(eject_ratio * ref, ref + eject_floor_ms)
 *   where ref is the LOWER median of the EWMAs of the OTHER in-pool members
 *   that have min_samples samples too.  "The others": with two followers (a
 *   3-node ensemble) a median that included the member itself could never
 *   be exceeded threefold, so the slow one would never go.  "Lower": when
 *   the slow members are half of the others, they are still compared with
 *   the healthy half.  The floor keeps sub-millisecond jitter from ever
 *   counting: EWMAs that stay within eject_floor_ms of each other never
 *   eject.  Without a ref (no other judged member) nobody is ejected.  One
 *   call ejects at most one member, the one with the highest EWMA (if it
 *   does not qualify, nobody does: it has the highest EWMA and the lowest
 *   ref), and never the last member of the pool.  So when every follower is
 *   slow the pool keeps the better one.
 *
 * - Removal.  A member whose session is not connected (or whose operation
 *   failed with connection loss) leaves the pool at once:
 *   zkr__health_set_usable(h, 0, now).  It does not count as an ejection and
 *   does not grow the backoff.
 *
 * - Probing.  A member that is usable but out of the pool is probed every
 *   probe_ms with a real sync+exists on its own session (the caller sends
 *   it; see zkr__health_probe_due / _sent / _result).  A probe is good when
 *   it succeeded and its latency is below the readmission threshold,
 *       max(readmit_ratio * median, median + eject_floor_ms),
 *   computed against the current pool median (any successful probe is good
 *   when the pool has no judged member).  A failed or slow probe resets the
 *   count.  readmit_ratio (2) is below eject_ratio (3): hysteresis.  Under
 *   load, queueing inflates the healthy members' latency until a degraded
 *   member is only about eject_ratio times slower; with one threshold it was
 *   ejected and readmitted over and over (docs/benchmarks-log.md, section 4.2).
 *
 * - Reinstatement.  After reinstate_k consecutive good probes, and once the
 *   member's minimum time out has passed, it is back in the pool.  Its EWMA
 *   then holds only that run of good probes (it restarts at the first good
 *   probe of a run), so the samples that got it ejected cannot eject it
 *   again, and it has fewer than min_samples samples: the pool sees it for
 *   min_samples reads before judging it again.
 *
 * - Backoff.  The first ejection keeps a member out for at least
 *   eject_min_ms; each further ejection that comes less than eject_reset_ms
 *   after the member last came back doubles that time, up to eject_max_ms.
 *   A member that stayed in the pool for eject_reset_ms starts over.
 *
 * - Connecting.  A member's first connection puts it in the pool at once
 *   (there is nothing to distrust yet).  A reconnection does not: the member
 *   is probed at once and comes back after reinstate_k good probes, with no
 *   minimum time out unless a latency ejection's is still running.  A
 *   reconnected TCP session proves the server answers, not that it is fast,
 *   and a flapping link would otherwise bounce in and out of the pool.
 *
 * - Empty pool.  When no member is in the pool but some are usable,
 *   zkr__health_evaluate() brings back the best usable one at once (lowest
 *   EWMA; one with no current samples counts as best), ignoring its
 *   minimum time out: "never eject the last member" also means a pool that
 *   emptied by disconnections refills from the members still reachable.
 *   Its EWMA restarts so that it is judged afresh.
 *
 * Options (a zero field means the default; zkr__health_cfg_defaults):
 *   half_life_ms     1000   EWMA half-life.  A follower that goes from 0.3
 *                           to 16 ms crosses the 2.3 ms threshold after
 *                           about 0.2 * half_life of reads; 1 s also
 *                           averages hundreds of samples under load.
 *   eject_ratio      3.0    relative threshold: a member three times slower
 *                           than its peers costs more than it brings.
 *   readmit_ratio    2.0    relative bar of a good probe; capped at
 *                           eject_ratio (equal: no hysteresis).
 *   eject_floor_ms   2.0    absolute threshold above the median: loopback
 *                           medians of ~0.3 ms would otherwise eject at
 *                           0.9 ms, well inside normal jitter.
 *   min_samples      10     samples in the current EWMA before a member is
 *                           judged, or can be a reference: one slow first
 *                           read (connection warm-up) is not a verdict.
 *   probe_ms         200    probe period of a member out of the pool.
 *   reinstate_k      3      consecutive good probes to come back: one lucky
 *                           probe is not a recovery; 3 * 200 ms keeps the
 *                           return well within a second.
 *   eject_min_ms     1000   minimum time out after a first ejection.
 *   eject_max_ms     30000  cap of the doubling minimum time out.
 *   eject_reset_ms   30000  time back in the pool after which the backoff
 *                           starts over at eject_min_ms.
 *   eject_off        0      nonzero: never eject for latency (option
 *                           health=off); removal on disconnection, probing
 *                           and reinstatement still work.
 *
 * How the caller drives it (all under the caller's lock):
 *   - zkr__health_init() once per member, zkr__health_set_usable() on every
 *     session state change (and with 0 on a ZCONNECTIONLOSS completion);
 *   - zkr__health_sample() for every completed read; a read that failed
 *     with ZOPERATIONTIMEOUT is best fed as a sample of its elapsed time;
 *   - zkr__health_evaluate() after samples (each completion or in batches)
 *     and at least every probe_ms; it is O(n log n) with n <= 64;
 *   - for each member, if zkr__health_probe_due(): send the sync+exists,
 *     call zkr__health_probe_sent(), and on its completion (which ZooKeeper
 *     always delivers, also on connection loss) zkr__health_probe_result()
 *     with the median from zkr__health_pool_median().  If sending fails,
 *     call zkr__health_probe_result() with ok = 0 at once.
 */
/* No locks: pure functions of their arguments; the caller serialises. */
#ifndef ZKR_HEALTH_H
#define ZKR_HEALTH_H

#include <stddef.h>
#include <stdint.h>

/* zkr__health_evaluate() and zkr__health_pool_median() consider at most
 * this many members (ZKR_MAX_MEMBERS of zkroute.h). */
#define ZKR__HEALTH_MAX_MEMBERS 64

#define ZKR__HEALTH_DEF_HALF_LIFE_MS 1000.0
#define ZKR__HEALTH_DEF_EJECT_RATIO 3.0
#define ZKR__HEALTH_DEF_READMIT_RATIO 2.0
#define ZKR__HEALTH_DEF_EJECT_FLOOR_MS 2.0
#define ZKR__HEALTH_DEF_MIN_SAMPLES 10u
#define ZKR__HEALTH_DEF_PROBE_MS 200u
#define ZKR__HEALTH_DEF_REINSTATE_K 3u
#define ZKR__HEALTH_DEF_EJECT_MIN_MS 1000u
#define ZKR__HEALTH_DEF_EJECT_MAX_MS 30000u
#define ZKR__HEALTH_DEF_EJECT_RESET_MS 30000u

typedef struct zkr__health_cfg {
  double half_life_ms;     /* EWMA half-life */
  double eject_ratio;      /* eject above ratio x reference median */
  double readmit_ratio;    /* a probe is good below ratio x pool median
                              (capped at eject_ratio) */
  double eject_floor_ms;   /* ... and above reference median + floor */
  unsigned min_samples;    /* samples before judging / being a reference */
  unsigned probe_ms;       /* probe period while out of the pool */
  unsigned reinstate_k;    /* consecutive good probes to come back */
  unsigned eject_min_ms;   /* minimum time out after a first ejection */
  unsigned eject_max_ms;   /* cap of the doubling minimum time out */
  unsigned eject_reset_ms; /* time in the pool that resets the backoff */
  int eject_off;           /* nonzero: never eject for latency */
} zkr__health_cfg_t;

/* Replaces every zero field of *c with its default (see above). */
void zkr__health_cfg_defaults(zkr__health_cfg_t *c);

/* 1 when *c (after defaults) is usable: finite half_life_ms > 0,
 * eject_ratio >= 1, eject_floor_ms >= 0, every count >= 1 and
 * eject_min_ms <= eject_max_ms; 0 otherwise (or for NULL). */
int zkr__health_cfg_valid(const zkr__health_cfg_t *c);

/* One member's health.  The caller may read every field (stats); only the
 * functions below write them. */
typedef struct zkr__health {
  /* Latency. */
  double ewma_ms;   /* time-decayed mean latency; -1 before any sample */
  double weight;    /* decayed weight of the samples behind ewma_ms */
  uint64_t last_ns; /* time of the last sample */
  uint64_t samples; /* samples ever taken (stats) */
  uint64_t fresh;   /* samples since the EWMA last restarted; compared
                       with min_samples */

  /* Pool membership. */
  int usable; /* session connected (and authenticated) */
  int in_pool;
  int ever_connected;        /* the first connection joins at once */
  uint64_t ejections;        /* latency ejections (stats) */
  uint64_t removals;         /* removals by disconnection (stats) */
  unsigned streak;           /* ejections in the current backoff streak */
  uint64_t in_since_ns;      /* last entry into the pool */
  uint64_t out_since_ns;     /* start of the current stretch out (!in_pool) */
  uint64_t out_closed_ns;    /* total of the finished stretches out */
  uint64_t min_out_until_ns; /* no reinstatement by probes before this */

  /* Probing. */
  uint64_t next_probe_ns;
  int probe_in_flight;
  unsigned good_probes;         /* consecutive good probes */
  uint64_t probes, probes_good; /* stats */
} zkr__health_t;

/* Starts a member: not usable, out of the pool (time out is counted from
 * now), no samples. */
void zkr__health_init(zkr__health_t *h, uint64_t now_ns);

/* Records one completed read (or any latency sample) of latency_ms.
 * Negative or non-finite latencies are ignored.  Does not change the pool:
 * call zkr__health_evaluate() for that. */
void zkr__health_sample(zkr__health_t *h, const zkr__health_cfg_t *c, uint64_t now_ns,
                        double latency_ms);

/* Session state.  usable = 0 removes the member from the pool at once.
 * usable = 1: the first connection ever joins the pool at once; later ones
 * make the member due for a probe now.  Returns 1 when in_pool changed. */
int zkr__health_set_usable(zkr__health_t *h, int usable, uint64_t now_ns);

/* Re-evaluates the pool formed by members[0..n) (the candidates, e.g. the
 * followers; NULL entries are skipped; only the first
 * ZKR__HEALTH_MAX_MEMBERS count).  Ejects at most one member, or, when the
 * pool is empty, brings the best usable member back.  Returns the number of
 * members whose in_pool changed (0 or 1). */
int zkr__health_evaluate(zkr__health_t *const *members, size_t n, const zkr__health_cfg_t *c,
                         uint64_t now_ns);

/* Lower median of the EWMAs of the in-pool members of members[0..n) that
 * have at least min_samples samples; -1 when there is none.  This is the
 * reference for judging probes. */
double zkr__health_pool_median(zkr__health_t *const *members, size_t n, const zkr__health_cfg_t *c);

/* The ejection threshold for a reference median:
 * max(eject_ratio * median, median + eject_floor_ms). */
double zkr__health_threshold(const zkr__health_cfg_t *c, double median_ms);
/* The bar a probe must stay under to count as good: readmit_ratio in place
 * of eject_ratio, same floor. */
double zkr__health_readmit_threshold(const zkr__health_cfg_t *c, double median_ms);

/* 1 when a probe should be sent now: usable, out of the pool, no probe in
 * flight, and probe_ms passed since the last one (or since the ejection or
 * reconnection). */
int zkr__health_probe_due(const zkr__health_t *h, uint64_t now_ns);

/* The caller sent a probe at now_ns; the next is due probe_ms later. */
void zkr__health_probe_sent(zkr__health_t *h, const zkr__health_cfg_t *c, uint64_t now_ns);

/* A probe completed.  ok: it succeeded (ZOK or ZNONODE from the exists);
 * latency_ms: its sync+exists round trip; pool_median_ms: from
 * zkr__health_pool_median() (-1: none).  A successful probe is a latency
 * sample.  Returns 1 when the member was reinstated. */
int zkr__health_probe_result(zkr__health_t *h, const zkr__health_cfg_t *c, uint64_t now_ns,
                             double latency_ms, int ok, double pool_median_ms);

/* Total time out of the pool since zkr__health_init(), including the
 * current stretch. */
uint64_t zkr__health_out_ns(const zkr__health_t *h, uint64_t now_ns);

#endif
