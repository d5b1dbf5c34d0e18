/* Unit tests of the in-flight path set (zkr__inflight_*): the paths the
 * handle's writes in flight will change, which decide whether a read must
 * follow them on the write session (DESIGN.md section 3).  Pure code: a
 * path is in the set from its first add to its last remove, paths are
 * compared whole (no prefix, no hash collision may stand for another),
 * and concurrent writers leave the counts exact. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/inflight.h"

START_TEST(empty_set_contains_nothing) {
  struct zkr__inflight *s = zkr__inflight_new();
  ck_assert_ptr_nonnull(s);
  ck_assert_int_eq(zkr__inflight_contains(s, "/a"), 0);
  ck_assert_int_eq(zkr__inflight_contains(s, "/"), 0);
  /* Removing a path that is not there changes nothing. */
  zkr__inflight_remove(s, "/a");
  ck_assert_int_eq(zkr__inflight_contains(s, "/a"), 0);
  zkr__inflight_free(s);
  zkr__inflight_free(NULL);
}
END_TEST

/* Two writes of one path in flight: the path stays until both are done. */
START_TEST(path_stays_until_its_last_write_is_done) {
  struct zkr__inflight *s = zkr__inflight_new();
  ck_assert_int_eq(zkr__inflight_add(s, "/k"), 0);
  ck_assert_int_eq(zkr__inflight_add(s, "/k"), 0);
  ck_assert_int_eq(zkr__inflight_contains(s, "/k"), 1);
  zkr__inflight_remove(s, "/k");
  ck_assert_int_eq(zkr__inflight_contains(s, "/k"), 1);
  zkr__inflight_remove(s, "/k");
  ck_assert_int_eq(zkr__inflight_contains(s, "/k"), 0);
  /* A stray removal after the last one does not go below zero: the next
   * write of the path is seen again. */
  zkr__inflight_remove(s, "/k");
  ck_assert_int_eq(zkr__inflight_add(s, "/k"), 0);
  ck_assert_int_eq(zkr__inflight_contains(s, "/k"), 1);
  zkr__inflight_free(s);
}
END_TEST

/* Paths are compared whole: a parent, a child or a longer name is another
 * path, and a write of one orders no read of the others. */
START_TEST(paths_compared_whole) {
  struct zkr__inflight *s = zkr__inflight_new();
  ck_assert_int_eq(zkr__inflight_add(s, "/a/b"), 0);
  ck_assert_int_eq(zkr__inflight_contains(s, "/a/b"), 1);
  ck_assert_int_eq(zkr__inflight_contains(s, "/a"), 0);
  ck_assert_int_eq(zkr__inflight_contains(s, "/a/b/c"), 0);
  ck_assert_int_eq(zkr__inflight_contains(s, "/a/bc"), 0);
  ck_assert_int_eq(zkr__inflight_contains(s, "/A/b"), 0);
  zkr__inflight_remove(s, "/a");
  ck_assert_int_eq(zkr__inflight_contains(s, "/a/b"), 1);
  zkr__inflight_free(s);
}
END_TEST

/* More paths than the table has buckets, so chains hold several: each is
 * found while in flight and gone once done, in whatever order they end. */
START_TEST(many_paths_share_buckets) {
  enum { N = 3000 };
  struct zkr__inflight *s = zkr__inflight_new();
  char p[32];
  for (int i = 0; i < N; i++) {
    snprintf(p, sizeof p, "/n/%d", i);
    ck_assert_int_eq(zkr__inflight_add(s, p), 0);
  }
  for (int i = 0; i < N; i++) {
    snprintf(p, sizeof p, "/n/%d", i);
    ck_assert_int_eq(zkr__inflight_contains(s, p), 1);
  }
  /* The odd ones end first, from the top. */
  for (int i = N - 1; i >= 0; i--) {
    if (i % 2 == 0) continue;
    snprintf(p, sizeof p, "/n/%d", i);
    zkr__inflight_remove(s, p);
  }
  for (int i = 0; i < N; i++) {
    snprintf(p, sizeof p, "/n/%d", i);
    ck_assert_int_eq(zkr__inflight_contains(s, p), i % 2 == 0);
  }
  for (int i = 0; i < N; i += 2) {
    snprintf(p, sizeof p, "/n/%d", i);
    zkr__inflight_remove(s, p);
  }
  for (int i = 0; i < N; i++) {
    snprintf(p, sizeof p, "/n/%d", i);
    ck_assert_int_eq(zkr__inflight_contains(s, p), 0);
  }
  zkr__inflight_free(s);
}
END_TEST

/* Writes begin and end on many threads at once (the application's and
 * the members' completion threads): the counts stay exact. */
enum { THREADS = 4, ROUNDS = 2000 };
static struct zkr__inflight *shared;
static void *writer(void *arg) {
  int id = (int)(intptr_t)arg;
  char mine[16];
  snprintf(mine, sizeof mine, "/t%d", id);
  for (int i = 0; i < ROUNDS; i++) {
    if (zkr__inflight_add(shared, "/common") != 0 || zkr__inflight_add(shared, mine) != 0)
      return (void *)1;
    if (!zkr__inflight_contains(shared, mine)) return (void *)1;
    zkr__inflight_remove(shared, mine);
    zkr__inflight_remove(shared, "/common");
  }
  return NULL;
}

START_TEST(concurrent_writers_keep_counts) {
  shared = zkr__inflight_new();
  /* One write of /common stays in flight throughout. */
  ck_assert_int_eq(zkr__inflight_add(shared, "/common"), 0);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, writer, (void *)(intptr_t)i);
  for (int i = 0; i < THREADS; i++) {
    void *r;
    pthread_join(t[i], &r);
    ck_assert_ptr_null(r);
  }
  ck_assert_int_eq(zkr__inflight_contains(shared, "/common"), 1);
  for (int i = 0; i < THREADS; i++) {
    char p[16];
    snprintf(p, sizeof p, "/t%d", i);
    ck_assert_int_eq(zkr__inflight_contains(shared, p), 0);
  }
  zkr__inflight_remove(shared, "/common");
  ck_assert_int_eq(zkr__inflight_contains(shared, "/common"), 0);
  zkr__inflight_free(shared);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("inflight");
  TCase *tc = tcase_create("pure");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, empty_set_contains_nothing);
  tcase_add_test(tc, path_stays_until_its_last_write_is_done);
  tcase_add_test(tc, paths_compared_whole);
  tcase_add_test(tc, many_paths_share_buckets);
  tcase_add_test(tc, concurrent_writers_keep_counts);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
