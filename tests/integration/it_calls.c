/* Integration tests of the zookeeper.h calls a routed handle now serves
 * instead of refusing, against the real proxied ensemble of
 * tests/integration/integration.sh:
 * - watch removal on watches held by different member sessions (a read
 *   selector places them; each member's watch count shows where they are
 *   and that each removal took its own), with the stock return codes (a
 *   stock session beside it gives the same codes for the same calls);
 * - zkr_set_servers adding a member, then removing one, under a routed
 *   workload that sees no failure;
 * - the owner's server, as zkr_get_current_server and
 *   zkr_get_connected_host name it. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_common.h"

typedef struct {
  _Atomic int n;
} count_t;

static void counting(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
  (void)zh, (void)state, (void)path;
  if (type == ZOO_SESSION_EVENT) return;
  count_t *c = ctx;
  c->n++;
}

/* A read selector that sends every read to the member named in ctx. */
static int pick_member(const zkr_member_info_t *members, int n, void *ctx) {
  int want = *(_Atomic int *)ctx;
  for (int i = 0; i < n; i++)
    if (members[i].index == want) return i;
  return -1;
}

/* Per member: watches armed on its session, reads the selector sent. */
static void member_watches(zkr_t *z, int *watches, uint64_t *picks) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  for (int i = 0; i < s->n_members; i++) {
    watches[i] = s->members[i].watches;
    picks[i] = s->members[i].selector_picks;
  }
  zkr_stats_free(s);
}

static void followers(zkr_t *z, int *f1, int *f2) {
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  *f1 = *f2 = -1;
  for (int i = 0; i < s->n_members; i++)
    if (s->members[i].role == ZKR_ROLE_FOLLOWER) {
      if (*f1 < 0) *f1 = i;
      else *f2 = i;
    }
  zkr_stats_free(s);
  ck_assert_int_ge(*f1, 0);
  ck_assert_int_ge(*f2, 0);
}

START_TEST(remove_watches_across_members) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  zhandle_t *stock = it_stock();
  char path[128], path2[128], buf[8];
  it_path(path, sizeof path, "rmw");
  it_path(path2, sizeof path2, "rmw2");
  ck_assert_int_eq(zoo_create(stock, path, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  ck_assert_int_eq(zoo_create(stock, path2, "a", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  /* The reads that set them are placed by a selector: watchers a (path)
   * and c (path2) on follower f1, b (path) and c2 (path2) on f2. */
  int f1, f2;
  followers(z, &f1, &f2);
  static _Atomic int target;
  ck_assert_int_eq(zkr_set_read_selector(z, pick_member, (void *)&target), ZOK);
  count_t a = {0}, b = {0}, c = {0}, c2 = {0};
  int w0[ZKR_MAX_MEMBERS], w[ZKR_MAX_MEMBERS];
  uint64_t p0[ZKR_MAX_MEMBERS], p[ZKR_MAX_MEMBERS];
  member_watches(z, w0, p0);
  int len;
  target = f1;
  len = sizeof buf;
  ck_assert_int_eq(zkr_wget(z, path, counting, &a, buf, &len, NULL), ZOK);
  ck_assert_int_eq(zkr_wexists(z, path2, counting, &c, NULL), ZOK);
  target = f2;
  len = sizeof buf;
  ck_assert_int_eq(zkr_wget(z, path, counting, &b, buf, &len, NULL), ZOK);
  ck_assert_int_eq(zkr_wexists(z, path2, counting, &c2, NULL), ZOK);
  ck_assert_int_eq(zkr_set_read_selector(z, NULL, NULL), ZOK);
  member_watches(z, w, p);
  printf("remove_watches: a and c on member %d (%d watches), b and c2 on member %d (%d)\n", f1,
         w[f1], f2, w[f2]);
  ck_assert_uint_eq(p[f1] - p0[f1], 2);
  ck_assert_uint_eq(p[f2] - p0[f2], 2);
  ck_assert_int_eq(w[f1] - w0[f1], 2);
  ck_assert_int_eq(w[f2] - w0[f2], 2);
  /* The same calls on a stock session give the codes a program expects. */
  count_t sa = {0};
  len = sizeof buf;
  ck_assert_int_eq(zoo_wget(stock, path, counting, &sa, buf, &len, NULL), ZOK);
  ck_assert_int_eq(zoo_remove_watches(stock, path, ZWATCHTYPE_DATA, counting, &c, 0), ZNOWATCHER);
  ck_assert_int_eq(zkr_remove_watches(z, path, ZWATCHTYPE_DATA, counting, &c, 0), ZNOWATCHER);
  ck_assert_int_eq(zoo_remove_watches(stock, path, ZWATCHTYPE_CHILD, counting, &sa, 0), ZNOWATCHER);
  ck_assert_int_eq(zkr_remove_watches(z, path, ZWATCHTYPE_CHILD, counting, &a, 0), ZNOWATCHER);
  ck_assert_int_eq(zoo_remove_watches(stock, path, ZWATCHTYPE_DATA, counting, &sa, 0), ZOK);
  /* a, from f1's session only. */
  ck_assert_int_eq(zkr_remove_watches(z, path, ZWATCHTYPE_DATA, counting, &a, 0), ZOK);
  member_watches(z, w, p);
  ck_assert_int_eq(w[f1] - w0[f1], 1);
  ck_assert_int_eq(w[f2] - w0[f2], 2);
  /* b locally: no server asked. */
  ck_assert_int_eq(zkr_remove_watches(z, path, ZWATCHTYPE_ANY, counting, &b, 1), ZOK);
  member_watches(z, w, p);
  ck_assert_int_eq(w[f1] - w0[f1], 1);
  ck_assert_int_eq(w[f2] - w0[f2], 1);
  /* Everything on path2, held by the two sessions. */
  ck_assert_int_eq(zkr_remove_all_watches(z, path2, ZWATCHTYPE_ANY, 0), ZOK);
  member_watches(z, w, p);
  ck_assert_int_eq(w[f1] - w0[f1], 0);
  ck_assert_int_eq(w[f2] - w0[f2], 0);
  ck_assert_int_eq(zkr_remove_all_watches(z, path2, ZWATCHTYPE_ANY, 0), ZNOWATCHER);
  ck_assert_int_eq(zoo_remove_all_watches(stock, path2, ZWATCHTYPE_ANY, 0), ZNOWATCHER);
  /* The nodes change: no removed watcher hears of it. */
  ck_assert_int_eq(zoo_set(stock, path, "b", 1, -1), ZOK);
  ck_assert_int_eq(zoo_set(stock, path2, "b", 1, -1), ZOK);
  it_sleep_ms(1000);
  ck_assert_int_eq(a.n + b.n + c.n + c2.n + sa.n, 0);
  /* A watch set afterwards still works. */
  count_t d = {0};
  len = sizeof buf;
  ck_assert_int_eq(zkr_wget(z, path, counting, &d, buf, &len, NULL), ZOK);
  ck_assert_int_eq(zoo_set(stock, path, "c", 1, -1), ZOK);
  for (uint64_t end = it_now_ms() + 5000; d.n == 0 && it_now_ms() < end;) it_sleep_ms(10);
  ck_assert_int_eq(d.n, 1);
  zookeeper_close(stock);
  zkr_close(z);
}
END_TEST

/* ---- the server list ---- */

typedef struct {
  zkr_t *z;
  char path[128];
  _Atomic int stop;
  long ok, failed;
  int last_rc;
} load_t;

static void *load_main(void *arg) {
  load_t *l = arg;
  char buf[16];
  for (int i = 0; !l->stop; i++) {
    int len = snprintf(buf, sizeof buf, "%d", i);
    int rc = zkr_set(l->z, l->path, buf, len, -1);
    if (rc == ZOK) {
      len = sizeof buf;
      rc = zkr_get(l->z, l->path, 0, buf, &len, NULL);
    }
    if (rc == ZOK) l->ok++;
    else l->failed++, l->last_rc = rc;
  }
  return NULL;
}

static int member_of(const zkr_stats_t *s, const char *addr) {
  for (int i = 0; i < s->n_members; i++)
    if (!strcmp(s->members[i].address, addr)) return i;
  return -1;
}

START_TEST(set_servers_under_load) {
  /* Start with two of the three servers: the owner's (the leader's) and
   * one follower. */
  char hosts[512], one[3][128];
  snprintf(hosts, sizeof hosts, "%s", it_hosts());
  char *save = NULL, *slash = strchr(hosts, '/');
  ck_assert_ptr_null(slash); /* the harness's list has no chroot */
  int n = 0;
  for (char *h = strtok_r(hosts, ",", &save); h && n < 3; h = strtok_r(NULL, ",", &save))
    snprintf(one[n++], sizeof one[0], "%s", h);
  ck_assert_int_eq(n, 3);
  int l = it_leader_index();
  ck_assert_int_ge(l, 0);
  int f1 = (l + 1) % 3, f2 = (l + 2) % 3;
  char two[300], all[400];
  snprintf(two, sizeof two, "%s,%s", one[l], one[f1]);
  snprintf(all, sizeof all, "%s,%s,%s", one[l], one[f1], one[f2]);
  zkr_options_t o = ZKR_OPTIONS_INIT;
  o.follow_config = -1; /* the list alone decides here */
  zkr_t *z = NULL;
  ck_assert_int_eq(zkr_init_opts(&z, two, NULL, 10000, NULL, NULL, 0, &o), ZOK);
  uint64_t deadline = it_now_ms() + 15000;
  while (zkr_state(z) != ZOO_CONNECTED_STATE && it_now_ms() < deadline) it_sleep_ms(20);
  static load_t ld;
  memset(&ld, 0, sizeof ld);
  ld.z = z;
  it_path(ld.path, sizeof ld.path, "srv");
  ck_assert_int_eq(zkr_create(z, ld.path, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, load_main, &ld), 0);
  it_sleep_ms(500);
  /* Add the third server: it gets a member, and reads. */
  uint64_t t0 = it_now_ms();
  ck_assert_int_eq(zkr_set_servers(z, all), ZOK);
  int m3 = -1;
  uint64_t in_pool_ms = 0;
  deadline = it_now_ms() + 10000;
  while (it_now_ms() < deadline) {
    zkr_stats_t *s;
    ck_assert_int_eq(zkr_stats(z, &s), ZOK);
    m3 = member_of(s, one[f2]);
    int ready = m3 >= 0 && s->members[m3].in_read_pool && s->members[m3].reads > 0;
    zkr_stats_free(s);
    if (ready) {
      in_pool_ms = it_now_ms() - t0;
      break;
    }
    it_sleep_ms(10);
  }
  ck_assert_int_ge(m3, 0);
  ck_assert_uint_gt(in_pool_ms, 0);
  /* Remove a follower that does not hold the owner session. */
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  int owner = s->owner, gone = member_of(s, one[f1]);
  if (gone == owner) gone = m3;
  zkr_stats_free(s);
  char keep[300];
  int kept = 0;
  keep[0] = '\0';
  for (int i = 0; i < 3; i++) {
    const char *a = i == 0 ? one[l] : i == 1 ? one[f1] : one[f2];
    ck_assert_int_eq(zkr_stats(z, &s), ZOK);
    int idx = member_of(s, a);
    zkr_stats_free(s);
    if (idx == gone) continue;
    snprintf(keep + strlen(keep), sizeof keep - strlen(keep), "%s%s", kept++ ? "," : "", a);
  }
  t0 = it_now_ms();
  ck_assert_int_eq(zkr_set_servers(z, keep), ZOK);
  uint64_t closed_ms = 0;
  deadline = it_now_ms() + 10000;
  while (it_now_ms() < deadline) {
    ck_assert_int_eq(zkr_stats(z, &s), ZOK);
    int done = s->members[gone].removed && s->members[gone].session_state != ZOO_CONNECTED_STATE;
    zkr_stats_free(s);
    if (done) {
      closed_ms = it_now_ms() - t0;
      break;
    }
    it_sleep_ms(10);
  }
  ck_assert_uint_gt(closed_ms, 0);
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  uint64_t reads_gone = s->members[gone].reads;
  zkr_stats_free(s);
  it_sleep_ms(1000);
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  ck_assert_uint_eq(s->members[gone].reads, reads_gone);
  zkr_stats_free(s);
  ld.stop = 1;
  pthread_join(t, NULL);
  printf("set_servers: member added in the read pool %llu ms after the call; member %d retired "
         "and closed %llu ms after; workload %ld ok, %ld failed (last %s)\n",
         (unsigned long long)in_pool_ms, gone, (unsigned long long)closed_ms, ld.ok, ld.failed,
         ld.failed ? zkr_err_name(ld.last_rc) : "-");
  ck_assert_int_eq(ld.failed, 0);
  ck_assert_int_gt(ld.ok, 10);
  zkr_close(z);
}
END_TEST

START_TEST(current_server_is_the_owners) {
  zkr_t *z = it_open(NULL, NULL, NULL);
  zkr_stats_t *s;
  ck_assert_int_eq(zkr_stats(z, &s), ZOK);
  const char *cur = zkr_get_current_server(z);
  ck_assert_ptr_nonnull(cur);
  ck_assert_str_eq(cur, s->members[s->owner].address);
  zkr_stats_free(s);
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  ck_assert_ptr_nonnull(zkr_get_connected_host(z, (struct sockaddr *)&ss, &len));
  ck_assert_int_eq(ss.ss_family, AF_INET);
  char ip[64];
  inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof ip);
  printf("current_server: %s (connected to %s:%d)\n", cur, ip,
         ntohs(((struct sockaddr_in *)&ss)->sin_port));
  ck_assert(strncmp(cur, ip, strlen(ip)) == 0);
  zkr_close(z);
  ck_assert_ptr_null(zkr_get_current_server(z));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("calls");
  TCase *tc = tcase_create("ensemble");
  tcase_set_timeout(tc, 90);
  tcase_add_test(tc, remove_watches_across_members);
  tcase_add_test(tc, set_servers_under_load);
  tcase_add_test(tc, current_server_is_the_owners);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return it_run(suite()); }
