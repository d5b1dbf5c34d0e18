/* The simulated network between the client machine and the servers: TCP
 * connections as FIFO message streams with a base delay, per-server extra
 * delay and cuts.  A cut link holds its messages (TCP retransmits) and
 * delivers them, in order, when it heals, to whichever side still has the
 * connection open; a closed side drops what reaches it.  So a request sent
 * just before the client gave up on its connection can still be applied:
 * an unknown outcome, as on a real network.  Messages and requests come
 * from free lists: no allocation per message once the pools are warm. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

sim_net_t *sim_n;

typedef struct held {
  sim_msg_t *head, *tail;
} held_t;

static held_t held_to_srv[SIM_MAX_SRV], held_to_cli[SIM_MAX_SRV];

void net_init(sim_net_t *n) {
  memset(n, 0, sizeof *n);
  memset(held_to_srv, 0, sizeof held_to_srv);
  memset(held_to_cli, 0, sizeof held_to_cli);
  n->base = sim_range(100, 400) * 1000; /* 0.1-0.4 ms */
  sim_n = n;
}

static void free_list_msgs(sim_msg_t *m) {
  while (m) {
    sim_msg_t *nx = m->next;
    free(m);
    m = nx;
  }
}

static void drop_msg(void *a) { net_msg_free(a); }

static void deliver(void *a, uint64_t b);

/* After ens_free: the messages still in flight or held by a cut give their
 * requests back, then every pool is freed. */
void net_free(sim_net_t *n) {
  sim_pending_each(deliver, drop_msg);
  for (int s = 0; s < SIM_MAX_SRV; s++) {
    for (held_t *h = &held_to_srv[s]; h; h = h == &held_to_srv[s] ? &held_to_cli[s] : NULL)
      for (sim_msg_t *m = h->head, *nx; m; m = nx) {
        nx = m->next;
        net_msg_free(m);
      }
  }
  free_list_msgs(n->free_msgs);
  while (n->free_reqs) {
    sim_sreq_t *nx = n->free_reqs->next;
    free(n->free_reqs);
    n->free_reqs = nx;
  }
  memset(held_to_srv, 0, sizeof held_to_srv);
  memset(held_to_cli, 0, sizeof held_to_cli);
  for (int i = 0; i < n->nconns; i++) {
    sim_conn_t *c = n->conns[i];
    free(c->wdata);
    free(c->wchild);
    free(c);
  }
  free(n->conns);
  if (sim_n == n) sim_n = NULL;
}

sim_msg_t *net_msg(int type, sim_conn_t *c) {
  sim_msg_t *m = sim_n->free_msgs;
  if (m) sim_n->free_msgs = m->next;
  else m = malloc(sizeof *m);
  memset(m, 0, sizeof *m);
  m->type = type;
  m->conn = c;
  return m;
}

void net_msg_free(sim_msg_t *m) {
  if (m->req && --m->req->refs <= 0) net_req_free(m->req);
  m->next = sim_n->free_msgs;
  sim_n->free_msgs = m;
}

sim_sreq_t *net_req(void) {
  sim_sreq_t *r = sim_n->free_reqs;
  if (r) sim_n->free_reqs = r->next;
  else r = malloc(sizeof *r);
  uint32_t gen = r->gen;
  memset(r, 0, sizeof *r);
  r->gen = gen + 1;
  r->txn = -1;
  r->res_path = -1;
  return r;
}

void net_req_free(sim_sreq_t *r) {
  free(r->wpaths);
  r->wpaths = NULL;
  r->gen++;
  r->next = sim_n->free_reqs;
  sim_n->free_reqs = r;
}

sim_conn_t *net_conn(int server, struct sim_zh *zh) {
  sim_conn_t *c = calloc(1, sizeof *c);
  c->id = sim_n->nconns;
  c->server = server;
  c->zh = zh;
  c->cli_open = 1;
  c->sess = -1;
  if (sim_n->nconns == sim_n->capconns) {
    sim_n->capconns = sim_n->capconns ? 2 * sim_n->capconns : 64;
    sim_n->conns = realloc(sim_n->conns, (size_t)sim_n->capconns * sizeof *sim_n->conns);
  }
  sim_n->conns[sim_n->nconns++] = c;
  return c;
}

static void push(held_t *h, sim_msg_t *m) {
  m->next = NULL;
  if (h->tail) h->tail->next = m;
  else h->head = m;
  h->tail = m;
}

static void arrive(sim_msg_t *m) {
  sim_conn_t *c = m->conn;
  if (m->to_server) {
    ens_recv(c->server, m);
  } else {
    if (!c->cli_open) {
      net_msg_free(m);
      return;
    }
    cli_recv(m);
  }
}

static void deliver(void *a, uint64_t b) {
  (void)b;
  sim_msg_t *m = a;
  int s = m->conn->server;
  held_t *h = m->to_server ? &held_to_srv[s] : &held_to_cli[s];
  /* Behind what the cut held until release() has resent it: the link is
   * back, but a message must not overtake older ones (TCP keeps a
   * connection's order; a request overtaking an earlier one of its
   * connection was answered first, and the client paired each answer with
   * the wrong request). */
  if (sim_n->cut[s] || h->head) {
    push(h, m);
    return;
  }
  arrive(m);
}

void net_send(sim_msg_t *m, int to_server) {
  sim_conn_t *c = m->conn;
  int s = c->server;
  m->to_server = to_server;
  uint64_t t = sim_w->now + sim_n->base + sim_range(0, 150000) + sim_n->delay[s];
  uint64_t *last = to_server ? &c->last_c2s : &c->last_s2c;
  if (t <= *last) t = *last + 1;
  *last = t;
  sim_at(t, deliver, m, 0);
}

static void release(void *a, uint64_t b) {
  (void)a;
  int s = (int)b;
  if (sim_n->cut[s]) return;
  held_t hs = held_to_srv[s], hc = held_to_cli[s];
  memset(&held_to_srv[s], 0, sizeof hs);
  memset(&held_to_cli[s], 0, sizeof hc);
  /* Resent in order, as TCP would after the path comes back. */
  for (sim_msg_t *m = hs.head, *nx; m; m = nx) {
    nx = m->next;
    arrive(m);
  }
  for (sim_msg_t *m = hc.head, *nx; m; m = nx) {
    nx = m->next;
    arrive(m);
  }
}

void net_cut(int s, int on) {
  sim_n->cut[s] = on;
  if (!on) sim_after(sim_range(1, 20) * SIM_MS / 10, release, NULL, (uint64_t)s);
}

void net_reset(int s) {
  for (int i = 0; i < sim_n->nconns; i++) {
    sim_conn_t *c = sim_n->conns[i];
    if (c->server != s || (!c->cli_open && !c->srv_open)) continue;
    if (c->srv_open) ens_conn_closed(s, c);
    if (c->cli_open) {
      sim_msg_t *m = net_msg(M_RST, c);
      m->to_server = 0;
      cli_recv(m);
    }
  }
}
