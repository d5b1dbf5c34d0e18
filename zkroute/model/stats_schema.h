/* The statistics schema: every field of the statistics once, in the order
 * of the JSON, with the Prometheus metric it becomes, if any.  Both
 * writers expand these lists - zkr_stats_json() (zkr__stats_json_*) and
 * zkr_stats_prometheus() (zkr__stats_prom_*) - and neither names a field
 * itself, so a field added here reaches both, and docs/stats.md (its
 * JSON rows checked by tests/lint/stats-doc.sh, its metric table generated
 * by `zkroute metrics`).
 *
 *   X(kind, path, key, value, mtype, metric, help)
 *
 * - kind: how the value is written in JSON (j_<kind>, beside zkr__stats_json_printf) and
 *   read into a sample (p_<kind>, beside zkr__stats_prom_*): INT (int64), COUNT
 *   (uint64 that only grows), BOOL, MS (double; negative: null), HEX
 *   (int64 as "0x..."), HEX_NULL (negative: null), STR, STATE (a
 *   ZOO_*_STATE, written as its name), STATE_NULL (ZKR__STATE_NULL:
 *   null), ROLE, POLICY (written as their names), HIST (a
 *   zkr_latency_hist_t), OBJ and END (open and close an object named key),
 *   MEMBERS (the members array: ZKR__STATS_MEMBER for each).
 * - path, key: the JSON object the field is in ("" top level, "owner.",
 *   "members[]."), and its key.
 * - value: an expression of s (const zkr_stats_t *) and vs (the virtual
 *   session's state), or for a member of m (const zkr_member_stats_t *)
 *   and i (its index).
 * - mtype: NONE (JSON only), COUNTER, GAUGE, HISTOGRAM, STATESET (a gauge
 *   per state word, 1 for the current one, label state), INFO (a gauge of
 *   1 whose label named key holds the value).
 * - metric: the metric's name after "zkroute_" (Prometheus naming:
 *   counters end in _total, times are seconds: an MS field becomes
 *   seconds); help: its HELP line. */
#ifndef ZKR_STATS_SCHEMA_H
#define ZKR_STATS_SCHEMA_H

#include <limits.h>

#define ZKR__STATE_NULL INT_MIN

/* clang-format off */
#define ZKR__STATS_TOP(X)                                                                          \
  X(INT, "", "version", ZKR_STATS_JSON_VERSION, NONE, , "")                                        \
  X(STATE, "", "state", vs, STATESET, session_state,                                               \
    "The virtual session's state (zkr_state): 1 for the current one")                             \
  X(POLICY, "", "policy", s->policy, INFO, handle_info, "The handle's routing policy, as a label") \
  X(INT, "", "n_members", s->n_members, GAUGE, members, "Members, removed ones included")         \
  X(INT, "", "leader", s->leader, NONE, , "")                                                      \
  X(COUNT, "", "leader_changes", s->leader_changes, COUNTER, leader_changes_total,                 \
    "Times the leader changed from one known member to another")                                  \
  X(INT, "", "write_member", s->write_member, NONE, , "")                                          \
  X(OBJ, "", "owner", 0, NONE, , "")                                                               \
  X(INT, "owner.", "member", s->owner, NONE, , "")                                                 \
  X(BOOL, "owner.", "moved", s->owner_moved, GAUGE, owner_moved,                                   \
    "1 once the owner session was re-attached away from its first member")                        \
  X(HEX, "owner.", "session_id", s->owner_session_id, INFO, owner_info,                            \
    "The owner session (the application's), its id as a label")                                   \
  X(STATE_NULL, "owner.", "state", s->owner >= 0 ? s->owner_state : ZKR__STATE_NULL, NONE, , "")  \
  X(COUNT, "owner.", "rescues", s->owner_rescues, COUNTER, owner_rescues_total,                    \
    "Times the owner session was re-attached to a live server")                                   \
  X(END, "", "owner", 0, NONE, , "")                                                               \
  X(OBJ, "", "watches", 0, NONE, , "")                                                             \
  X(INT, "watches.", "registered", s->watches, GAUGE, watches,                                     \
    "Watches registered now: armed, being re-armed, or lost")                                     \
  X(INT, "watches.", "lost", s->watches_lost, GAUGE, watches_lost,                                 \
    "Watches whose session was lost, waiting for a re-arm to get through")                        \
  X(COUNT, "watches.", "rearms", s->watch_rearms, COUNTER, watch_rearms_total,                     \
    "Re-arms sent after a carrier session was lost")                                              \
  X(COUNT, "watches.", "missed_events", s->watch_missed_events, COUNTER,                           \
    watch_missed_events_total, "Events a re-arm found missed and delivered")                      \
  X(END, "", "watches", 0, NONE, , "")                                                             \
  X(OBJ, "", "hedge", 0, NONE, , "")                                                               \
  X(BOOL, "hedge.", "on", s->hedging, GAUGE, hedging, "1 while hedged reads are active")           \
  X(MS, "hedge.", "delay_ms", s->hedge_delay_ms, GAUGE, hedge_delay_seconds,                       \
    "The current hedge delay (absent while hedging is off)")                                      \
  X(COUNT, "hedge.", "eligible", s->hedge_eligible, COUNTER, hedge_eligible_reads_total,           \
    "Reads sent that could have been hedged")                                                     \
  X(COUNT, "hedge.", "sent", s->hedges_sent, COUNTER, hedges_sent_total, "Hedges sent")            \
  X(COUNT, "hedge.", "won", s->hedges_won, COUNTER, hedges_won_total,                              \
    "Hedges whose reply was the one delivered")                                                   \
  X(COUNT, "hedge.", "capped", s->hedges_capped, COUNTER, hedges_capped_total,                     \
    "Hedges due but refused by hedge_max_pct")                                                    \
  X(COUNT, "hedge.", "no_member", s->hedges_no_member, COUNTER, hedges_no_member_total,            \
    "Hedges due with no other pool member to send them to")                                       \
  X(COUNT, "hedge.", "discarded", s->hedge_discarded, COUNTER, hedge_replies_discarded_total,      \
    "Replies dropped: the loser of each hedged pair, and early errors")                           \
  X(END, "", "hedge", 0, NONE, , "")                                                               \
  X(OBJ, "", "selector", 0, NONE, , "")                                                            \
  X(BOOL, "selector.", "on", s->has_selector, NONE, , "")                                          \
  X(COUNT, "selector.", "picks", s->selector_picks, COUNTER, selector_picks_total,                 \
    "Reads placed by the read selector")                                                          \
  X(COUNT, "selector.", "fallbacks", s->selector_fallbacks, COUNTER, selector_fallbacks_total,     \
    "Reads the read selector left to the default policy")                                         \
  X(END, "", "selector", 0, NONE, , "")                                                            \
  X(OBJ, "", "membership", 0, NONE, , "")                                                          \
  X(INT, "membership.", "follows_config", s->follows_config, GAUGE, follows_config,                \
    "1 following /zookeeper/config; 0 not read yet; -1 read, not followed; -2 off")               \
  X(HEX_NULL, "membership.", "config_version", s->config_version, NONE, , "")                      \
  X(COUNT, "membership.", "config_reads", s->config_reads, COUNTER, config_reads_total,            \
    "Reads of /zookeeper/config sent")                                                            \
  X(COUNT, "membership.", "config_errors", s->config_errors, COUNTER, config_errors_total,         \
    "Reads of /zookeeper/config that failed or did not parse")                                    \
  X(COUNT, "membership.", "added", s->members_added, COUNTER, members_added_total,                 \
    "Members added after zkr_init")                                                               \
  X(COUNT, "membership.", "removed", s->members_removed, COUNTER, members_removed_total,           \
    "Members retired")                                                                            \
  X(END, "", "membership", 0, NONE, , "")                                                          \
  X(OBJ, "", "log", 0, NONE, , "")                                                                 \
  X(COUNT, "log.", "lines", s->log_lines, COUNTER, log_lines_total,                                \
    "Log lines of routing state changes written to ZooKeeper's log")                              \
  X(COUNT, "log.", "dropped", s->log_dropped, COUNTER, log_lines_dropped_total,                    \
    "Log lines of routing state changes dropped by the storm limit")                              \
  X(END, "", "log", 0, NONE, , "")                                                                 \
  X(MEMBERS, "", "members", 0, NONE, , "")

#define ZKR__STATS_MEMBER(X)                                                                       \
  X(INT, "members[].", "index", i, NONE, , "")                                                     \
  X(STR, "members[].", "address", m->address, NONE, , "")                                          \
  X(STR, "members[].", "zone", m->zone, NONE, , "")                                                \
  X(INT, "members[].", "server_id", m->server_id, NONE, , "")                                      \
  X(ROLE, "members[].", "role", m->role, NONE, , "")                                               \
  X(HEX_NULL, "members[].", "zxid", m->zxid, NONE, , "")                                           \
  X(BOOL, "members[].", "removed", m->removed, GAUGE, member_removed,                              \
    "1 for a retired member: it takes no new operation")                                          \
  X(BOOL, "members[].", "parked", m->parked, GAUGE, member_parked,                                 \
    "1 for a member without a session (the read_members cap, or idle_read_members while idle)")                                    \
  X(STATE, "members[].", "session_state", m->session_state, NONE, , "")                            \
  X(HEX, "members[].", "session_id", m->session_id, NONE, , "")                                    \
  X(BOOL, "members[].", "connected", m->connected, GAUGE, member_connected,                        \
    "1 while the member's session is connected and authenticated")                               \
  X(BOOL, "members[].", "in_read_pool", m->in_read_pool, GAUGE, in_read_pool,                      \
    "1 while the member is in the read pool")                                                     \
  X(BOOL, "members[].", "is_write_session", m->is_write_session, GAUGE, write_session,             \
    "1 for the member whose session takes the writes")                                            \
  X(BOOL, "members[].", "is_owner", m->is_owner, GAUGE, owner_session,                             \
    "1 for the member whose own session is the owner session")                                    \
  X(INT, "members[].", "hosted_on", m->hosted_on, NONE, , "")                                      \
  X(COUNT, "members[].", "reads", m->reads, COUNTER, reads_total,                                  \
    "Application reads sent to the member first")                                                 \
  X(COUNT, "members[].", "writes", m->writes, COUNTER, writes_total, "Writes sent to the member") \
  X(COUNT, "members[].", "syncs", m->syncs, COUNTER, syncs_total, "Syncs sent before reads")       \
  X(COUNT, "members[].", "coalesced", m->coalesced, COUNTER, coalesced_reads_total,                \
    "Reads that shared a sync sent for others")                                                   \
  X(COUNT, "members[].", "reads_again", m->reads_again, COUNTER, reads_again_total,                \
    "Reads sent again behind a new sync: their sync was lost with its connection")                \
  X(COUNT, "members[].", "errors", m->errors, COUNTER, errors_total,                               \
    "Requests that failed without a server's answer")                                             \
  X(INT, "members[].", "outstanding", m->outstanding, GAUGE, outstanding_requests,                 \
    "Requests sent to the member and not completed")                                              \
  X(COUNT, "members[].", "hedges", m->hedges, COUNTER, hedges_total,                               \
    "Hedge requests sent to the member")                                                          \
  X(COUNT, "members[].", "selector_picks", m->selector_picks, NONE, , "")                          \
  X(INT, "members[].", "watches", m->watches, GAUGE, member_watches,                               \
    "Watch records armed on the member's session")                                                \
  X(COUNT, "members[].", "samples", m->samples, COUNTER, latency_samples_total,                    \
    "Latency samples taken: completed reads and probes")                                          \
  X(MS, "members[].", "ewma_ms", m->ewma_ms, GAUGE, latency_ewma_seconds,                          \
    "Read latency EWMA (absent before the first sample)")                                         \
  X(COUNT, "members[].", "ejections", m->ejections, COUNTER, ejections_total,                      \
    "Latency ejections from the read pool")                                                       \
  X(MS, "members[].", "out_of_pool_ms", m->out_of_pool_ms, COUNTER, out_of_pool_seconds_total,     \
    "Time out of the read pool")                                                                  \
  X(COUNT, "members[].", "srvr_polls", m->srvr_polls, COUNTER, srvr_polls_total,                   \
    "srvr requests sent to the member's server")                                                  \
  X(COUNT, "members[].", "srvr_shared", m->srvr_shared, COUNTER, srvr_shared_total,                 \
    "srvr answers taken from another handle's request")                                           \
  X(COUNT, "members[].", "srvr_failures", m->srvr_failures, COUNTER, srvr_failures_total,          \
    "srvr requests that failed")                                                                  \
  X(COUNT, "members[].", "rescues", m->rescues, COUNTER, rescues_total,                            \
    "Times the owner session left this member for a live server")                                 \
  X(COUNT, "members[].", "recreated", m->recreated, COUNTER, carriers_recreated_total,             \
    "Times the member's carrier session was replaced by a new one")                               \
  X(HIST, "members[].", "read_latency", &m->read_latency, HISTOGRAM, read_latency_seconds,         \
    "Read latency, send to reply: sync+read pairs and hedges, not probes")                           \
  X(HIST, "members[].", "write_latency", &m->write_latency, HISTOGRAM, write_latency_seconds,      \
    "Write latency, send to reply")
/* clang-format on */

#endif
