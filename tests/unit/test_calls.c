/* Unit tests (no server) of the call list, <zkroute/calls.h>: every
 * function of it that takes a handle has its #define in
 * <zkroute/compat.h> naming its adapter, and every #define there is one of
 * the list's (the preprocessor cannot generate #define lines, so this
 * test stands in for it); handle-less functions stay ZooKeeper's, zerror
 * excepted.  Then the adapters the list gained: zoo_lock_auth and
 * zoo_unlock_auth, and zoo_cycle_next_server passed through for a plain
 * handle (ZKROUTE=off). */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zkroute/compat.h>

#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct {
  const char *name;      /* as the list writes it */
  const char *expansion; /* what the name is after <zkroute/compat.h> */
  int handle;            /* X (takes a handle) or N */
} entry_t;

/* The name column is stringized twice: as written, and after the
 * compat header's #define of it. */
#define ENTRY_X(gen, tbl, ret, name, ...) {#name, STR(name), 1},
#define ENTRY_N(gen, rv, ret, name, ...) {#name, STR(name), 0},
static const entry_t entries[] = {ZKR_ZOO_CALLS(ENTRY_X, ENTRY_N)};
#define N_ENTRIES (sizeof entries / sizeof entries[0])

START_TEST(every_handle_call_has_its_define) {
  int x = 0;
  for (size_t i = 0; i < N_ENTRIES; i++) {
    const entry_t *e = &entries[i];
    char want[128];
    if (e->handle) {
      snprintf(want, sizeof want, "zkr_compat_%s", e->name);
      x++;
    } else if (strcmp(e->name, "zerror") == 0) {
      snprintf(want, sizeof want, "zkr_strerror");
    } else {
      snprintf(want, sizeof want, "%s", e->name); /* stays ZooKeeper's */
    }
    ck_assert_msg(strcmp(e->expansion, want) == 0, "%s is %s after <zkroute/compat.h>, not %s",
                  e->name, e->expansion, want);
  }
  ck_assert_int_eq(x, 68); /* libzookeeper_mt 3.8's functions with a handle */
}
END_TEST

static int listed(const char *name) {
  for (size_t i = 0; i < N_ENTRIES; i++)
    if (strcmp(entries[i].name, name) == 0) return entries[i].handle || !strcmp(name, "zerror");
  return 0;
}

START_TEST(every_define_is_a_listed_call) {
  const char *top = getenv("top_srcdir");
  char path[4096];
  snprintf(path, sizeof path, "%s/include/zkroute/compat.h", top ? top : ".");
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "cannot read %s", path);
  char line[512], name[128], target[128];
  int defines = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "#define %127s %127s", name, target) != 2) continue;
    if (strncmp(name, "ZKR", 3) == 0 || strchr(name, '(')) continue; /* its own macros */
    defines++;
    ck_assert_msg(listed(name), "compat.h defines %s, which ZKR_ZOO_CALLS does not list", name);
    if (strcmp(name, "zerror") == 0) ck_assert_str_eq(target, "zkr_strerror");
    else
      ck_assert_msg(strncmp(target, "zkr_compat_", 11) == 0 && !strcmp(target + 11, name),
                    "compat.h defines %s as %s", name, target);
  }
  fclose(f);
  ck_assert_int_eq(defines, 68 + 1);
}
END_TEST

/* Handles on closed local ports: created and closed without connecting. */
#define HOSTS "127.0.0.1:9,127.0.0.2:9,127.0.0.3:9"

static void quiet(void) {
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");
  zoo_set_log_stream(devnull);
}

/* In front of the real zoo_cycle_next_server (the program's definition
 * comes before libzookeeper_mt's, whose own threads call it too): counts
 * the calls made on the test's thread, then passes each on. */
#undef zoo_cycle_next_server
static _Thread_local int cycled;
static void (*real_cycle)(zhandle_t *);
/* Looked up before any thread exists: libzookeeper_mt's I/O thread calls
 * it too, so a lazy lookup would race with the test's thread (TSan). */
__attribute__((constructor)) static void find_real_cycle(void) {
  *(void **)&real_cycle = dlsym(RTLD_NEXT, "zoo_cycle_next_server");
}
void zoo_cycle_next_server(zhandle_t *zh) {
  cycled++;
  real_cycle(zh);
}
#define zoo_cycle_next_server zkr_compat_zoo_cycle_next_server

START_TEST(routed_handle_calls) {
  quiet();
  zhandle_t *zh = zookeeper_init(HOSTS, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(zh);
  ck_assert_ptr_nonnull(zkr_compat_routed(zh));
  ck_assert_int_eq(zoo_lock_auth(zh), ZOK);
  ck_assert_int_eq(zoo_unlock_auth(zh), ZOK);
  zoo_cycle_next_server(zh); /* nothing to do: one server per member */
  ck_assert_int_eq(cycled, 0);
  ck_assert_int_eq(zookeeper_close(zh), ZOK);
}
END_TEST

START_TEST(plain_handle_calls_pass_through) {
  quiet();
  setenv("ZKROUTE", "off", 1); /* read at the first init, in this process */
  zhandle_t *zh = zookeeper_init(HOSTS, NULL, 10000, NULL, NULL, 0);
  ck_assert_ptr_nonnull(zh);
  ck_assert_ptr_null(zkr_compat_routed(zh));
  ck_assert_int_eq(zoo_lock_auth(zh), ZOK);
  ck_assert_int_eq(zoo_unlock_auth(zh), ZOK);
  int before = cycled;
  zoo_cycle_next_server(zh); /* was dropped for plain handles */
  ck_assert_int_eq(cycled, before + 1);
  ck_assert_int_eq(zookeeper_close(zh), ZOK);
}
END_TEST

int main(void) {
  Suite *s = suite_create("calls");
  TCase *tc = tcase_create("list");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, every_handle_call_has_its_define);
  tcase_add_test(tc, every_define_is_a_listed_call);
  tcase_add_test(tc, routed_handle_calls);
  tcase_add_test(tc, plain_handle_calls_pass_through);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
