/* Options: the one table of every option (name, type, range, default,
 * meaning), the key=value setter used by the CLI, the benchmark and
 * environment variables, and the resolution of zero fields to defaults. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

typedef enum { OPT_INT, OPT_DOUBLE, OPT_POLICY, OPT_CONSISTENCY, OPT_SWITCH } opt_kind_t;

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
    {"consistency", OPT_CONSISTENCY, OFF(consistency), 1, 2,
     ZKR_CONSISTENCY_LINEARIZABLE,
     "linearizable (sync+read) | local (no sync, may read stale data)"},
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
    {"follow_config", OPT_SWITCH, OFF(follow_config), -1, 1, 1,
     "on: read and watch /zookeeper/config, open sessions to added servers and close "
     "those of removed ones (when its client addresses are the connect string's)"},
};
#undef OFF
#define N_OPTS (sizeof opt_table / sizeof opt_table[0])

static const char *const policy_names[] = {NULL, "hybrid", "round_robin",
                                           "leader_only", "sticky", "boltzmann"};
static const char *const consistency_names[] = {NULL, "linearizable", "local"};

static int parse_name(const char *v, const char *const *names, int n) {
  for (int i = 1; i < n; i++)
    if (strcasecmp(v, names[i]) == 0) return i;
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
  if (errno || end == v || *end != '\0' || !isfinite(x) || x < min || x > max)
    return 0;
  *out = x;
  return 1;
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
      iv = parse_name(value, policy_names, 6);
      if (iv < 0) return ZKR_EOPTION_VALUE;
      memcpy(field, &iv, sizeof iv);
      return ZOK;
    case OPT_CONSISTENCY:
      iv = parse_name(value, consistency_names, 3);
      if (iv < 0) return ZKR_EOPTION_VALUE;
      memcpy(field, &iv, sizeof iv);
      return ZOK;
    case OPT_SWITCH:
      if (!strcmp(value, "1") || !strcasecmp(value, "on") ||
          !strcasecmp(value, "true") || !strcasecmp(value, "yes"))
        iv = 1;
      else if (!strcmp(value, "0") || !strcasecmp(value, "off") ||
               !strcasecmp(value, "false") || !strcasecmp(value, "no"))
        iv = -1;
      else
        return ZKR_EOPTION_VALUE;
      memcpy(field, &iv, sizeof iv);
      return ZOK;
    }
  }
  return ZKR_EOPTION;
}

int zkr_option_info(int i, const char **name, const char **doc,
                    double *default_value) {
  if (i < 0 || (size_t)i >= N_OPTS) return ZBADARGUMENTS;
  if (name) *name = opt_table[i].name;
  if (doc) *doc = opt_table[i].doc;
  if (default_value) *default_value = opt_table[i].def;
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
    if (t->kind == OPT_DOUBLE) {
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
