/* The fault schedule, drawn from the seed: at least three incidents in the
 * fault phase (leader kill and hang, follower lag, connection resets,
 * cuts between the client machine and one member, session expiry, a
 * follower restart, a follower left with a deposed leader), each with its
 * end (restart, resume, heal), and every action marked in the history.
 * faults_heal() ends them all. */
#include "faults.h"

#include <stdio.h>
#include <string.h>

#include "sim.h"

enum {
  F_LEADER_KILL,
  F_LEADER_HANG,
  F_FOLLOWER_LAG,
  F_RESET,
  F_CUT,
  F_EXPIRE,
  F_FOLLOWER_RESTART,
  F_DEPOSED,
  F_COUNT
};

static const char *names[F_COUNT] = {
    "leader-kill", "leader-hang", "follower-lag",     "reset",
    "cut",         "expire",      "follower-restart", "deposed-leader"};

typedef struct incident {
  int type, target, active;
  uint64_t dur;
} incident_t;

#define MAXINC 8
static incident_t inc[MAXINC];
static hist_t *H;

static void mark(const char *fmt, int type, int s) {
  hev_t *e = hist_ev(H, E_MARK);
  e->t = sim_w->now;
  snprintf(e->mark, sizeof e->mark, fmt, names[type], s + 1);
}

static int leader_now(void) {
  for (int s = 0; s < sim_e->n; s++)
    if (sim_e->srv[s].role == ROLE_LEADER && s == sim_e->leader) return s;
  return (int)sim_range(0, (uint64_t)sim_e->n - 1);
}

static int follower_now(void) {
  int l = sim_e->leader, s = (int)sim_range(0, (uint64_t)sim_e->n - 1);
  if (s == l) s = (s + 1) % sim_e->n;
  return s;
}

static void end_ev(void *a, uint64_t b);

static void start_ev(void *a, uint64_t b) {
  (void)b;
  incident_t *x = a;
  x->active = 1;
  switch (x->type) {
  case F_LEADER_KILL:
    x->target = leader_now();
    ens_kill(x->target);
    break;
  case F_LEADER_HANG:
    x->target = leader_now();
    ens_hang(x->target);
    break;
  case F_FOLLOWER_LAG:
    x->target = follower_now();
    ens_set_lag(x->target, sim_range(50, 800) * SIM_MS);
    break;
  case F_RESET:
    x->target = (int)sim_range(0, (uint64_t)sim_e->n - 1);
    net_reset(x->target);
    x->active = 0;
    mark("%s sim%d", x->type, x->target);
    return;
  case F_CUT:
    x->target = (int)sim_range(0, (uint64_t)sim_e->n - 1);
    net_cut(x->target, 1);
    break;
  case F_EXPIRE: {
    int alive[64], n = 0;
    for (int i = 0; i < sim_e->nsess && n < 64; i++)
      if (sim_e->sess[i].state == SESS_ALIVE) alive[n++] = i;
    x->active = 0;
    if (!n) return;
    int i = alive[sim_range(0, (uint64_t)n - 1)];
    ens_expire(sim_e->sess[i].id);
    mark("%s (session on sim%d)", x->type, sim_e->sess[i].owner);
    return;
  }
  case F_FOLLOWER_RESTART:
    x->target = follower_now();
    ens_kill(x->target);
    break;
  case F_DEPOSED:
    x->target = leader_now();
    if (sim_e->n >= 5) {
      /* The leader and one follower cut off from the other three. */
      int g[SIM_MAX_SRV] = {0}, f = follower_now();
      g[x->target] = g[f] = 1;
      ens_partition(g);
    } else {
      ens_hang(x->target); /* resumes after a new leader took over */
    }
    break;
  }
  mark("%s sim%d", x->type, x->target);
  sim_after(x->dur, end_ev, x, 0);
}

static void end_ev(void *a, uint64_t b) {
  (void)b;
  incident_t *x = a;
  if (!x->active) return;
  x->active = 0;
  switch (x->type) {
  case F_LEADER_KILL:
  case F_FOLLOWER_RESTART: ens_restart(x->target); break;
  case F_LEADER_HANG: ens_resume(x->target); break;
  case F_FOLLOWER_LAG: ens_set_lag(x->target, 0); break;
  case F_CUT: net_cut(x->target, 0); break;
  case F_DEPOSED:
    if (sim_e->n >= 5) ens_partition(NULL);
    else ens_resume(x->target);
    break;
  }
  mark("end %s sim%d", x->type, x->target);
}

int faults_plan(hist_t *h, uint64_t span, uint64_t session_ns) {
  H = h;
  memset(inc, 0, sizeof inc);
  int n = (int)sim_range(3, 6);
  for (int i = 0; i < n; i++) {
    incident_t *x = &inc[i];
    x->type = (int)sim_range(0, F_COUNT - 1);
    uint64_t dur;
    switch (x->type) {
    case F_CUT:
      /* Often between 2/3 and 1x the session timeout: the client gives up
       * on the connection while the session lives on. */
      dur = sim_chance(40) ? sim_range(session_ns * 2 / 3 / SIM_MS, session_ns / SIM_MS) * SIM_MS
                           : sim_range(200, 6000) * SIM_MS;
      break;
    case F_LEADER_KILL: dur = sim_range(300, 4000) * SIM_MS; break;
    case F_LEADER_HANG: dur = sim_range(500, 5000) * SIM_MS; break;
    case F_FOLLOWER_LAG: dur = sim_range(1000, 4000) * SIM_MS; break;
    case F_FOLLOWER_RESTART: dur = sim_range(0, 1000) * SIM_MS; break;
    case F_DEPOSED:
      dur = sim_e->sync_timeout + sim_e->election_delay + sim_range(300, 3000) * SIM_MS;
      break;
    default: dur = 0;
    }
    x->dur = dur;
    uint64_t at = sim_range(300, span / SIM_MS > 800 ? span / SIM_MS - 500 : 400) * SIM_MS;
    sim_at(at, start_ev, x, 0);
  }
  return n;
}

int faults_active(void) {
  for (int i = 0; i < MAXINC; i++)
    if (inc[i].active) return 1;
  return 0;
}

void faults_heal(void) {
  for (int i = 0; i < MAXINC; i++) inc[i].active = 0;
  for (int s = 0; s < sim_e->n; s++) {
    net_cut(s, 0);
    sim_n->delay[s] = 0;
  }
  ens_heal();
  hev_t *e = hist_ev(H, E_MARK);
  e->t = sim_w->now;
  snprintf(e->mark, sizeof e->mark, "heal");
}
