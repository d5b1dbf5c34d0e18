/* Shared helpers of the integration tests: the ensemble the harness
 * started (ZKR_TEST_HOSTS), routed handles that wait until ready, a plain
 * libzookeeper_mt client to check from the outside, and each server's own
 * srvr counters. */
#ifndef IT_COMMON_H
#define IT_COMMON_H

#include <check.h>
#include <stdint.h>
#include "zkroute.h"

#define IT_MEMBERS 3

const char *it_hosts(void);
/* A routed handle, ready: connected, leader known, every follower in the
 * read pool.  Fails the test after 15 s. */
zkr_t *it_open(const zkr_options_t *opts, watcher_fn fn, void *ctx);
zkr_t *it_open_hosts(const char *hosts, const zkr_options_t *opts, watcher_fn fn, void *ctx);
void it_wait_ready(zkr_t *z);
/* The owner session is whichever member session was established first:
 * tests that need a watch on a carrier place its read with this read
 * selector, whose ctx is the owner's member index (cast to a pointer). */
int it_off_owner(const zkr_member_info_t *members, int n, void *ctx);
/* A plain stock session on any member, connected. */
zhandle_t *it_stock(void);
/* The same on the servers that hosts names (an ensemble of a test's own). */
zhandle_t *it_stock_hosts(const char *hosts);
/* srvr "Received:" of member i (0-based), -1 on failure. */
int64_t it_received(int i);
/* Member i's role from its own srvr. */
int it_leader_index(void);
/* A fresh node path for this test: "/it/<name>-<pid>-<n>", parent made. */
void it_path(char *buf, size_t len, const char *name);
void it_sleep_ms(int ms);
uint64_t it_now_ms(void);
/* Runs `ensemble.sh CMD DIR [member]` on the harness's ensemble (member is
 * 0-based here, as in zkr_stats; -1: none).  Returns the exit status; the
 * script's skips (exit 77: kill/pause on an external ensemble that is not
 * in containers) are reported as failures, since CI runs a local ensemble
 * and a container one with ZKR_TEST_CONTAINERS (tests/harness/ensemble.sh). */
int it_ensemble(const char *cmd, int member);
/* Runs `ensemble.sh fault DIR ARGS` (a proxied ensemble's fault proxy,
 * e.g. "blackhole c1 on"); returns the exit status. */
int it_fault(const char *args);
/* Waits until the ensemble has a leader again and every member serves. */
void it_ensemble_heal(void);
/* 1 when the harness's ensemble has the fault proxy in front of it, as
 * tests/integration/integration.sh's own always has; 0 for an external one
 * (ZKR_TEST_ENSEMBLE: docker/, no proxy to inject faults into), after one
 * line saying that `what` (the test case) is left out and why.  Cases whose
 * tests need the proxy are added only when this says 1; on the harness's
 * own ensemble a missing proxy still fails them. */
int it_have_proxy(const char *what);
/* Runs the suite: 0 when every test passed, 1 when one failed, 77 (skip)
 * when no test was left to run (every case needed the proxy). */
int it_run(Suite *s);

#endif
