/* Options: the one table of every option (name, type, range, default,
 * meaning), the key=value setter used by the CLI, the benchmark and
 * environment variables, and the resolution of zero fields to defaults.
 * Also the words: the names of every enum value (policies, consistency
 * modes, roles, session states) and the switch words, which the setter,
 * the environment (zkr__env_*), the statistics (zkr__stats_json_*) and the CLI read
 * from here. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/hosts.h"
#include "model/options.h"

/* OPT_ZONES, OPT_ZONE and OPT_ADDR are text, stored in the struct's char
 * array (max holds its size): the zones list, one zone label, and an
 * address to listen on. */
typedef enum {
  OPT_INT,
  OPT_DOUBLE,
  OPT_POLICY,
  OPT_CONSISTENCY,
  OPT_SWITCH,
  OPT_ZONES,
  OPT_ZONE,
  OPT_ADDR
} opt_kind_t;

typedef struct {
  const char *name;
  opt_kind_t kind;
  size_t offset;
  double min, max, def;
  const char *doc;
} opt_t;

#define OFF(f) offsetof(zkr_options_t, f)
static const opt_t opt_table[] = {
    {"policy", OPT_POLICY, OFF(policy), 1, 5, ZKR_POLICY_HYBRID,
     "hybrid | round_robin | leader_only | sticky | boltzmann: which member serves an operation"},
    {"consistency", OPT_CONSISTENCY, OFF(consistency), 1, 3, ZKR_CONSISTENCY_LINEARIZABLE,
     "linearizable (sync+read) | session (a stock session's guarantees, far fewer syncs) | "
     "local (no sync, may read stale data)"},
    {"leader_poll_ms", OPT_INT, OFF(leader_poll_ms), 20, 600000, 500,
     "period of the srvr poll of every member; a write-session disconnect polls at once"},
    {"srvr_timeout_ms", OPT_INT, OFF(srvr_timeout_ms), 10, 60000, 1000,
     "connect + reply deadline of one srvr request"},
    {"srvr_max_reply", OPT_INT, OFF(srvr_max_reply), 256, 16777216, 65536,
     "srvr reply size cap in bytes; larger replies count as failures"},
    {"read_from_leader", OPT_SWITCH, OFF(read_from_leader), -1, 1, -1,
     "on: the leader is in the read pool; off: only when no follower is usable"},
    {"seed", OPT_INT, OFF(seed), 1, INT_MAX, 0,
     "seed of the sticky policy's random member and of boltzmann's draws (0: from the clock)"},
    {"ewma_half_life_ms", OPT_DOUBLE, OFF(ewma_half_life_ms), 1, 3600000, 1000,
     "half-life of the per-member latency EWMA (time-based decay)"},
    {"eject_ratio", OPT_DOUBLE, OFF(eject_ratio), 1.01, 1000, 3,
     "eject a member whose EWMA exceeds this many times the pool median"},
    {"readmit_ratio", OPT_DOUBLE, OFF(readmit_ratio), 1.01, 1000, 2,
     "a probe of an ejected member is good below this many times the pool median "
     "(and the median + eject_floor_ms); capped at eject_ratio"},
    {"eject_floor_ms", OPT_DOUBLE, OFF(eject_floor_ms), 0.01, 60000, 2,
     "... and exceeds the median by at least this much, so jitter never ejects"},
    {"min_samples", OPT_INT, OFF(min_samples), 1, 1000000, 10,
     "samples a member needs before it can be ejected"},
    {"probe_ms", OPT_INT, OFF(probe_ms), 10, 600000, 200,
     "period of the sync+exists probe of an ejected member"},
    {"reinstate_k", OPT_INT, OFF(reinstate_k), 1, 1000, 3,
     "consecutive good probes that bring an ejected member back"},
    {"eject_min_ms", OPT_INT, OFF(eject_min_ms), 1, 3600000, 1000,
     "minimum time out of the pool after a first ejection"},
    {"eject_max_ms", OPT_INT, OFF(eject_max_ms), 1, 3600000, 30000,
     "cap of the doubling minimum time out after repeated ejections"},
    {"health", OPT_SWITCH, OFF(health), -1, 1, 1,
     "on: latency-based ejection from the read pool; off: never eject for latency"},
    {"rescue_ms", OPT_INT, OFF(rescue_ms), 1, 3600000, 0,
     "re-attach the session of a member unreachable this long to a live server "
     "(0: a third of the session timeout)"},
    {"boltzmann_temperature", OPT_DOUBLE, OFF(boltzmann_temperature), 0.001, 1000000, 1,
     "policy boltzmann: softmax temperature in ms; a member L ms slower than the "
     "fastest gets exp(-L/T) times its share"},
    {"hedge", OPT_SWITCH, OFF(hedge), -1, 1, 1,
     "on: a read without a watch that has no reply after the hedge delay is sent "
     "once more to another read-pool member, chosen at random (policy hybrid)"},
    {"hedge_floor_ms", OPT_DOUBLE, OFF(hedge_floor_ms), 0.1, 600000, 5,
     "lowest hedge delay, so loopback jitter does not hedge"},
    {"hedge_percentile", OPT_DOUBLE, OFF(hedge_percentile), 50, 99.9, 95,
     "hedge delay = lower median over the pool members of this percentile of each member's last "
     "256 read latencies"},
    {"hedge_max_pct", OPT_DOUBLE, OFF(hedge_max_pct), 0.1, 100, 5,
     "at most this many hedges per 100 hedgeable reads (extra load cap)"},
    {"hedge_burst", OPT_INT, OFF(hedge_burst), 1, 1000000, 20,
     "hedges the cap lets go at once after a quiet spell (token bucket size)"},
    {"leader_read_weight", OPT_DOUBLE, OFF(leader_read_weight), 0, 1, 0,
     "policy hybrid: share of reads the leader serves (0..1; it also carries every "
     "write); 0: the leader reads only when no follower is usable"},
    {"zones", OPT_ZONES, OFF(zones), 0, sizeof(((zkr_options_t *)0)->zones), 0,
     "zone label of each member: a,a,b (host list order) or host:port=a,...; "
     "labels are 1-31 of A-Z a-z 0-9 . _ -"},
    {"local_zone", OPT_ZONE, OFF(local_zone), 0, sizeof(((zkr_options_t *)0)->local_zone), 0,
     "the client's zone: members labelled with it are the ones zkr_selector_same_zone "
     "prefers"},
    {"follow_config", OPT_SWITCH, OFF(follow_config), -1, 1, 1,
     "on: read and watch /zookeeper/config, open sessions to added servers and close "
     "those of removed ones (when its client addresses are the connect string's)"},
    {"sync_coalesce", OPT_SWITCH, OFF(sync_coalesce), -1, 1, 1,
     "on: reads arriving while sync_coalesce_depth syncs are in flight on their member "
     "session share the next sync; off: one sync per read"},
    {"sync_coalesce_depth", OPT_INT, OFF(sync_coalesce_depth), 1, 16, 4,
     "sync_coalesce on: syncs one member session may have in flight at once; a read that "
     "finds fewer sends its own at once, one that finds this many waits to share the next"},
    {"read_members", OPT_INT, OFF(read_members), 0, 64, 0,
     "keep sessions to the leader, the owner and only this many other members (the best "
     "read-pool members, re-chosen as health changes; the owner's member is one of them while "
     "it is a follower in the read pool); 0: every member"},
    {"idle_read_members", OPT_INT, OFF(idle_read_members), -1, 64, 1,
     "the read_members cap while the handle is idle (no operation for idle_park_ms): the "
     "follower sessions beyond it are closed and opened again at the next operation; -1: off"},
    {"idle_park_ms", OPT_INT, OFF(idle_park_ms), 100, 86400000, 60000,
     "how long without an operation makes a handle idle for idle_read_members"},
    {"resolve_ms", OPT_INT, OFF(resolve_ms), 10, 3600000, 0,
     "period of the re-resolution of the connect string's host names: an address a name "
     "gains becomes a member, one it loses is retired (0: leader_poll_ms)"},
    {"idle_poll_ms", OPT_INT, OFF(idle_poll_ms), 20, 3600000, 5000,
     "srvr poll period while the handle is idle (no operation since the last poll, the "
     "leader known, every member answering); the next operation polls at once"},
    {"rescue_down_ms", OPT_INT, OFF(rescue_down_ms), 1, 3600000, 250,
     "re-attach the owner session this long after its server went silent to srvr (twice "
     "in a row) while another member answers, without waiting for rescue_ms"},
    {"jute_maxbuffer", OPT_INT, OFF(jute_maxbuffer), 1024, INT_MAX, 1048575,
     "the servers' jute.maxbuffer: a request larger than this many bytes (path, data, "
     "ACLs, header) is refused with ZKR_ETOOBIG before it is sent"},
    {"metrics", OPT_ADDR, OFF(metrics), 0, sizeof(((zkr_options_t *)0)->metrics), 0,
     "IPV4:PORT or [IPV6]:PORT: serve GET /metrics there (Prometheus text of every handle "
     "of the process that sets it); a bad address or a port in use is one line on stderr"},
};
#undef OFF
#define N_OPTS (sizeof opt_table / sizeof opt_table[0])

/* ---- words ---- */

static const char *const policy_names[] = {[ZKR_POLICY_HYBRID] = "hybrid",
                                           [ZKR_POLICY_ROUND_ROBIN] = "round_robin",
                                           [ZKR_POLICY_LEADER_ONLY] = "leader_only",
                                           [ZKR_POLICY_STICKY] = "sticky",
                                           [ZKR_POLICY_BOLTZMANN] = "boltzmann"};
static const char *const consistency_names[] = {[ZKR_CONSISTENCY_LINEARIZABLE] = "linearizable",
                                                [ZKR_CONSISTENCY_LOCAL] = "local",
                                                [ZKR_CONSISTENCY_SESSION] = "session"};
static const char *const role_names[] = {
    [ZKR_ROLE_UNKNOWN] = "unknown",         [ZKR_ROLE_LEADER] = "leader",
    [ZKR_ROLE_FOLLOWER] = "follower",       [ZKR_ROLE_OBSERVER] = "observer",
    [ZKR_ROLE_STANDALONE] = "standalone",   [ZKR_ROLE_READ_ONLY] = "read-only",
    [ZKR_ROLE_NOT_SERVING] = "not-serving", [ZKR_ROLE_UNREACHABLE] = "unreachable"};
#define N_WORDS(a) ((int)(sizeof a / sizeof a[0]))

/* A switch's words, for options and the ZKROUTE and ZKROUTE_VERBOSE
 * variables alike; the first of each is the one written. */
static const char *const on_words[] = {"on", "1", "yes", "true"};
static const char *const off_words[] = {"off", "0", "no", "false"};

int zkr__options_switch_word(const char *v) {
  for (int i = 0; v && i < N_WORDS(on_words); i++)
    if (strcasecmp(v, on_words[i]) == 0) return 1;
  for (int i = 0; v && i < N_WORDS(off_words); i++)
    if (strcasecmp(v, off_words[i]) == 0) return -1;
  return 0;
}

static const char *name_of(const char *const *names, int n, int v) {
  return v >= 0 && v < n && names[v] ? names[v] : "unknown";
}

const char *zkr_policy_name(int policy) {
  if (policy == ZKR_POLICY_DEFAULT) policy = ZKR_POLICY_HYBRID;
  return name_of(policy_names, N_WORDS(policy_names), policy);
}

const char *zkr_role_name(zkr_role_t role) {
  return name_of(role_names, N_WORDS(role_names), (int)role);
}

/* ZooKeeper's states are variables (zookeeper.h's ZOOAPI const int), not
 * constants: the list is made at each call. */
const char *zkr_state_name(int state) {
  const struct {
    int state;
    const char *name;
  } names[] = {{0, "closed"}, /* what zoo_state and zkr_state say of a closed handle */
               {ZOO_CONNECTED_STATE, "connected"},
               {ZOO_CONNECTING_STATE, "connecting"},
               {ZOO_ASSOCIATING_STATE, "associating"},
               {ZOO_EXPIRED_SESSION_STATE, "expired"},
               {ZOO_AUTH_FAILED_STATE, "auth-failed"},
               {ZOO_READONLY_STATE, "read-only"},
               {ZOO_NOTCONNECTED_STATE, "not-connected"}};
  for (int i = 0; i < N_WORDS(names); i++)
    if (names[i].state == state) return names[i].name;
  return "unknown";
}

static const char *consistency_name(int c) {
  if (c == ZKR_CONSISTENCY_DEFAULT) c = ZKR_CONSISTENCY_LINEARIZABLE;
  return name_of(consistency_names, N_WORDS(consistency_names), c);
}

static int parse_name(const char *v, const char *const *names, int n) {
  for (int i = 1; i < n; i++)
    if (names[i] && strcasecmp(v, names[i]) == 0) return i;
  return -1;
}

static int parse_int(const char *v, double min, double max, int *out) {
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || end == v || *end != '\0' || x < min || x > max) return 0;
  *out = (int)x;
  return 1;
}

static int parse_double(const char *v, double min, double max, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end != '\0' || !isfinite(x) || x < min || x > max) return 0;
  *out = x;
  return 1;
}

/* ---- zones ---- */

static int zone_label_ok(const char *l, size_t n) {
  if (n == 0 || n > 31) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = l[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

int zkr__options_zones_next(const char **s, char *addr, size_t addr_len, char *label,
                            size_t label_len) {
  const char *p = *s;
  if (*p == '\0') return 0;
  const char *end = strchr(p, ',');
  if (!end) end = p + strlen(p);
  const char *eq = memchr(p, '=', (size_t)(end - p));
  const char *l = eq ? eq + 1 : p;
  size_t an = eq ? (size_t)(eq - p) : 0, ln = (size_t)(end - l);
  if (eq && (an == 0 || memchr(l, '=', ln))) return -1;
  for (size_t i = 0; i < an; i++)
    if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f) return -1;
  if (!zone_label_ok(l, ln) || an >= addr_len || ln >= label_len) return -1;
  memcpy(addr, p, an);
  addr[an] = '\0';
  memcpy(label, l, ln);
  label[ln] = '\0';
  /* A trailing comma would be an empty last entry. */
  if (*end == ',' && end[1] == '\0') return -1;
  *s = *end ? end + 1 : end;
  return 1;
}

/* Syntax of a whole zones list: every entry well formed, and all of one
 * form (all "addr=label" or all positional labels). */
static int zones_ok(const char *v) {
  char addr[ZKR__HOST_NAME_MAX + 16], label[32];
  int n = 0, addressed = 0, r;
  while ((r = zkr__options_zones_next(&v, addr, sizeof addr, label, sizeof label)) == 1) {
    if (n++ == 0) addressed = addr[0] != '\0';
    else if (addressed != (addr[0] != '\0')) return 0;
  }
  return r == 0;
}

static int text_ok(opt_kind_t kind, const char *v, size_t size) {
  size_t n = strnlen(v, size);
  if (n >= size) return 0;
  if (n == 0) return 1; /* none */
  if (kind == OPT_ADDR) return zkr__hosts_parse_listen(v, NULL, NULL);
  return kind == OPT_ZONE ? zone_label_ok(v, n) : zones_ok(v);
}

int zkr_options_set(zkr_options_t *opts, const char *key, const char *value) {
  if (!opts || !key || !value) return ZBADARGUMENTS;
  for (size_t i = 0; i < N_OPTS; i++) {
    const opt_t *o = &opt_table[i];
    if (strcmp(o->name, key) != 0) continue;
    char *field = (char *)opts + o->offset;
    int iv;
    double dv;
    switch (o->kind) {
    case OPT_INT:
      if (!parse_int(value, o->min, o->max, &iv)) return ZKR_EOPTION_VALUE;
      memcpy(field, &iv, sizeof iv);
      return ZOK;
    case OPT_DOUBLE:
      if (!parse_double(value, o->min, o->max, &dv)) return ZKR_EOPTION_VALUE;
      memcpy(field, &dv, sizeof dv);
      return ZOK;
    case OPT_POLICY:
      iv = parse_name(value, policy_names, N_WORDS(policy_names));
      if (iv < 0) return ZKR_EOPTION_VALUE;
      memcpy(field, &iv, sizeof iv);
      return ZOK;
    case OPT_CONSISTENCY:
      iv = parse_name(value, consistency_names, N_WORDS(consistency_names));
      if (iv < 0) return ZKR_EOPTION_VALUE;
      memcpy(field, &iv, sizeof iv);
      return ZOK;
    case OPT_SWITCH:
      if ((iv = zkr__options_switch_word(value)) == 0) return ZKR_EOPTION_VALUE;
      memcpy(field, &iv, sizeof iv);
      return ZOK;
    case OPT_ZONES:
    case OPT_ZONE:
    case OPT_ADDR:
      if (!text_ok(o->kind, value, (size_t)o->max)) return ZKR_EOPTION_VALUE;
      memset(field, 0, (size_t)o->max);
      memcpy(field, value, strlen(value));
      return ZOK;
    }
  }
  return ZKR_EOPTION;
}

int zkr_option_info(int i, const char **name, const char **doc, double *default_value) {
  if (i < 0 || (size_t)i >= N_OPTS) return ZBADARGUMENTS;
  if (name) *name = opt_table[i].name;
  if (doc) *doc = opt_table[i].doc;
  if (default_value) *default_value = opt_table[i].def;
  return ZOK;
}

int zkr_option_default_text(int i, char *buf, size_t len) {
  if (i < 0 || (size_t)i >= N_OPTS || !buf || len == 0) return ZBADARGUMENTS;
  const opt_t *o = &opt_table[i];
  switch (o->kind) {
  case OPT_POLICY: snprintf(buf, len, "%s", zkr_policy_name((int)o->def)); break;
  case OPT_CONSISTENCY: snprintf(buf, len, "%s", consistency_name((int)o->def)); break;
  case OPT_SWITCH: snprintf(buf, len, "%s", o->def > 0 ? on_words[0] : off_words[0]); break;
  case OPT_ZONES:
  case OPT_ZONE:
  case OPT_ADDR: snprintf(buf, len, "(none)"); break;
  case OPT_INT:
  case OPT_DOUBLE: snprintf(buf, len, "%.15g", o->def); break;
  }
  return ZOK;
}

/* Copies in (or all defaults when NULL) to out, replacing each zero field
 * by its default and checking every set field against its range, so that a
 * struct filled by hand gets the same checks as zkr_options_set(). */
int zkr__options_resolve(const zkr_options_t *in, zkr_options_t *out) {
  zkr_options_t o = ZKR_OPTIONS_INIT;
  if (in) {
    if (in->version != ZKR_OPTIONS_VERSION) return ZKR_EOPTIONS_VERSION;
    o = *in;
  }
  for (size_t i = 0; i < N_OPTS; i++) {
    const opt_t *t = &opt_table[i];
    char *field = (char *)&o + t->offset;
    if (t->kind == OPT_ADDR) {
      /* Not refused here: a bad address is one line on stderr when the
       * handle starts (zkr__metrics_*), and the handle runs on. */
      field[(size_t)t->max - 1] = '\0';
    } else if (t->kind == OPT_ZONES || t->kind == OPT_ZONE) {
      if (!text_ok(t->kind, field, (size_t)t->max)) return ZKR_EOPTION_VALUE;
    } else if (t->kind == OPT_DOUBLE) {
      double v;
      memcpy(&v, field, sizeof v);
      if (v == 0) v = t->def;
      else if (!(v >= t->min && v <= t->max)) return ZKR_EOPTION_VALUE;
      memcpy(field, &v, sizeof v);
    } else {
      int v;
      memcpy(&v, field, sizeof v);
      if (v == 0) v = (int)t->def;
      else if (v < t->min || v > t->max) return ZKR_EOPTION_VALUE;
      memcpy(field, &v, sizeof v);
    }
  }
  *out = o;
  return ZOK;
}
