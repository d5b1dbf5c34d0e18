/* zkroute-bench's Markdown report (bench.h), on stdout and in
 * OUT/results.md: the run's conditions, one row per policy, the ratios of
 * hybrid to each other policy, the --targets checks and each trial. */
#include <math.h>
#include <string.h>

#include "bench.h"

trial_t *trials_of(const report_t *R, int p) { return &R->tr[(size_t)p * (size_t)R->c->trials]; }

int policy_index(const cfg_t *c, const char *name) {
  for (int i = 0; i < c->npol; i++)
    if (strcmp(c->pol[i].name, name) == 0) return i;
  return -1;
}

static void fmt_ms(char *buf, size_t n, double ms) {
  if (isnan(ms)) snprintf(buf, n, "-");
  else if (ms < 10) snprintf(buf, n, "%.2f", ms);
  else if (ms < 100) snprintf(buf, n, "%.1f", ms);
  else snprintf(buf, n, "%.0f", ms);
}

static void shares(const report_t *R, const summary_t *s, int op, char *buf, size_t n) {
  uint64_t tot = 0;
  size_t m = R->c->hl.n, off = 0;
  for (size_t i = 0; i < m; i++) tot += s->m_ops[op][i];
  buf[0] = '\0';
  for (size_t i = 0; i < m && off < n; i++) {
    double pct = tot ? 100.0 * (double)s->m_ops[op][i] / (double)tot : NAN;
    int w;
    if (isnan(pct)) w = snprintf(buf + off, n - off, "%s?", i ? " · " : "");
    else if (pct > 0 && pct < 0.95) w = snprintf(buf + off, n - off, "%s%.1f", i ? " · " : "", pct);
    else w = snprintf(buf + off, n - off, "%s%.0f", i ? " · " : "", pct);
    if (w < 0) break;
    off += (size_t)w;
  }
}

const char *role_word(const report_t *R, int i) {
  switch (R->roles[i]) {
  case ZKR_ROLE_LEADER: return "leader";
  case ZKR_ROLE_FOLLOWER: return "follower";
  case ZKR_ROLE_OBSERVER: return "observer";
  default: return zkr_role_name(R->roles[i]);
  }
}

static void ratio_cell(FILE *f, double a, double b, double paired) {
  if (isnan(a) || isnan(b) || b == 0) fprintf(f, " - |");
  else fprintf(f, " %.2f (%.2f) |", a / b, paired);
}

static double m_thr(const trial_t *t) { return t->thr; }
static double m_cpu(const trial_t *t) { return t->cpu_us; }
static double m_r50(const trial_t *t) { return t->lat[OP_READ].p50; }
static double m_r99(const trial_t *t) { return t->lat[OP_READ].p99; }
static double m_w50(const trial_t *t) { return t->lat[OP_WRITE].p50; }
static double m_w99(const trial_t *t) { return t->lat[OP_WRITE].p99; }

int collect_checks(const report_t *R, check_t *ck) {
  const cfg_t *c = R->c;
  int n = 0, h = policy_index(c, "hybrid");
  if (!c->targets || h < 0) return 0;
  const summary_t *H = &R->sum[h];
  int rr = policy_index(c, "round_robin"), orc = policy_index(c, "oracle");
  int st = policy_index(c, "sticky"), stock = policy_index(c, "stock");
  if (strcmp(c->targets, "steady") == 0) {
    if (rr >= 0) {
      ck[n++] = (check_t){"hybrid write P50 / round_robin write P50",
                          H->lat[OP_WRITE].p50 / R->sum[rr].lat[OP_WRITE].p50, 0.75, 1};
    }
    if (orc >= 0)
      ck[n++] = (check_t){"hybrid write P50 / oracle write P50",
                          H->lat[OP_WRITE].p50 / R->sum[orc].lat[OP_WRITE].p50, 1.10, 1};
    if (rr >= 0)
      ck[n++] =
          (check_t){"hybrid throughput / round_robin throughput", H->thr / R->sum[rr].thr, 1.0, 0};
  } else if (strcmp(c->targets, "degraded") == 0) {
    if (rr >= 0) {
      const summary_t *B = &R->sum[rr];
      ck[n++] = (check_t){"hybrid read P99 / round_robin read P99",
                          H->lat[OP_READ].p99 / B->lat[OP_READ].p99, 0.40, 1};
      ck[n++] = (check_t){"hybrid write P99 / round_robin write P99",
                          H->lat[OP_WRITE].p99 / B->lat[OP_WRITE].p99, 0.35, 1};
      ck[n++] = (check_t){"hybrid throughput / round_robin throughput", H->thr / B->thr, 1.5, 0};
    }
    if (st >= 0)
      ck[n++] = (check_t){"hybrid throughput / sticky (on the degraded follower) throughput",
                          H->thr / R->sum[st].thr, 3.0, 0};
  }
  if (stock >= 0)
    ck[n++] = (check_t){"hybrid client CPU per op / stock (plain libzookeeper_mt) CPU per op",
                        H->cpu_us / R->sum[stock].cpu_us, 1.15, 1};
  if (orc >= 0)
    ck[n++] = (check_t){"hybrid client CPU per op / oracle (plain libzookeeper_mt) CPU per op",
                        H->cpu_us / R->sum[orc].cpu_us, 1.15, 1};
  return n;
}

int check_pass(const check_t *k) {
  if (isnan(k->value)) return 0;
  return k->at_most ? k->value <= k->limit : k->value >= k->limit;
}

void write_markdown(FILE *f, const report_t *R) {
  const cfg_t *c = R->c;
  char a[64];
  fprintf(f, "## zkroute-bench%s%s\n\n", c->label ? ": " : "", c->label ? c->label : "");
  fprintf(f, "- command: `%s`\n", c->command);
  fprintf(
      f,
      "- started: %s; machine: %d × %s, Linux %s; load average (1 min) %.2f before, %.2f after\n",
      R->started, R->ncpu, R->cpu_model, R->kernel, R->load_before, R->load_after);
  fprintf(f, "- workload: %d closed-loop workers (%s calls) on one client", c->workers,
          c->async_api ? "async+wait" : "sync");
  if (c->rate > 0) fprintf(f, ", paced to %.0f ops/s in total", c->rate);
  fprintf(f,
          "; %.0f %% reads (sync+get, linearizable in every policy but stock_unsynced) / %.0f %% "
          "writes (set); "
          "%d keys of %d bytes\n",
          c->read_frac * 100, 100 - c->read_frac * 100, c->keys, c->value_size);
  fprintf(f,
          "- trials: %d × %.0f s measured after %.0f s warm-up each, policies interleaved "
          "(order %s each round); figures are medians across trials; shares are over all trials\n",
          c->trials, c->duration, c->warmup, c->rotate ? "rotated" : "fixed");
  if (c->opt_text[0]) fprintf(f, "- library options: %s\n", c->opt_text);
  fprintf(f, "- members:");
  for (size_t i = 0; i < c->hl.n; i++) {
    member_addr(c, (int)i, a, sizeof a);
    fprintf(f, "%s %zu = %s (%s%s)", i ? "," : "", i + 1, a, role_word(R, (int)i),
            (int)i == c->degraded_member ? ", degraded" : "");
  }
  if (c->sticky_member >= 0) fprintf(f, "; sticky pinned to member %d", c->sticky_member + 1);
  fprintf(f, "\n\n");
  fprintf(
      f,
      "| policy | trials | ops/s | read P50 | P90 | P99 | P99.9 | write P50 | P90 | P99 | P99.9 "
      "| errors r/w | client CPU µs/op | ctx sw/op | reads by member %% | writes by member %% |\n");
  fprintf(f, "| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: "
             "| --- | --- |\n");
  for (int p = 0; p < c->npol; p++) {
    const summary_t *s = &R->sum[p];
    char v[8][16], sr[256], sw[256];
    fmt_ms(v[0], 16, s->lat[OP_READ].p50);
    fmt_ms(v[1], 16, s->lat[OP_READ].p90);
    fmt_ms(v[2], 16, s->lat[OP_READ].p99);
    fmt_ms(v[3], 16, s->lat[OP_READ].p999);
    fmt_ms(v[4], 16, s->lat[OP_WRITE].p50);
    fmt_ms(v[5], 16, s->lat[OP_WRITE].p90);
    fmt_ms(v[6], 16, s->lat[OP_WRITE].p99);
    fmt_ms(v[7], 16, s->lat[OP_WRITE].p999);
    shares(R, s, OP_READ, sr, sizeof sr);
    shares(R, s, OP_WRITE, sw, sizeof sw);
    fprintf(f,
            "| %s | %d | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %llu/%llu | %.1f | %.1f | "
            "%s | %s |\n",
            c->pol[p].name, s->n, s->thr, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
            (unsigned long long)s->err[OP_READ], (unsigned long long)s->err[OP_WRITE], s->cpu_us,
            s->csw, sr, sw);
  }
  fprintf(f, "\nLatencies in ms.  Shares list members 1..%zu in order.\n", c->hl.n);
  if (c->npids) {
    fprintf(f, "\nCPU per operation of the watched processes (--watch-pids; µs/op, median across "
               "trials), next to the client's:\n\n| policy | client |");
    for (int i = 0; i < c->npids; i++) fprintf(f, " %s |", c->pid_names[i]);
    fprintf(f, " watched total | all |\n| --- | --: |");
    for (int i = 0; i < c->npids; i++) fprintf(f, " --: |");
    fprintf(f, " --: | --: |\n");
    for (int p = 0; p < c->npol; p++) {
      const trial_t *T = trials_of(R, p);
      double v[1024];
      fprintf(f, "| %s | %.0f |", c->pol[p].name, R->sum[p].cpu_us);
      for (int i = 0; i < c->npids; i++) {
        int k = 0;
        for (int t = 0; t < c->trials && k < 1024; t++)
          if (T[t].ran) v[k++] = T[t].pid_us[i];
        fprintf(f, " %.0f |", median(v, k));
      }
      fprintf(f, " %.0f | %.0f |\n", R->sum[p].srv_us, R->sum[p].srv_us + R->sum[p].cpu_us);
    }
  }
  int base = policy_index(c, "hybrid");
  if (base < 0) base = 0;
  if (c->npol > 1) {
    fprintf(f,
            "\n%s ÷ each other policy: ratio of the medians (in brackets: median of the "
            "per-round ratios)\n\n",
            c->pol[base].name);
    fprintf(f, "| vs | read P50 | read P99 | write P50 | write P99 | throughput | CPU/op |\n");
    fprintf(f, "| --- | --: | --: | --: | --: | --: | --: |\n");
    const trial_t *A = trials_of(R, base);
    const summary_t *H = &R->sum[base];
    for (int p = 0; p < c->npol; p++) {
      if (p == base) continue;
      const summary_t *s = &R->sum[p];
      const trial_t *B = trials_of(R, p);
      fprintf(f, "| %s |", c->pol[p].name);
      ratio_cell(f, H->lat[OP_READ].p50, s->lat[OP_READ].p50, paired_ratio(A, B, c->trials, m_r50));
      ratio_cell(f, H->lat[OP_READ].p99, s->lat[OP_READ].p99, paired_ratio(A, B, c->trials, m_r99));
      ratio_cell(f, H->lat[OP_WRITE].p50, s->lat[OP_WRITE].p50,
                 paired_ratio(A, B, c->trials, m_w50));
      ratio_cell(f, H->lat[OP_WRITE].p99, s->lat[OP_WRITE].p99,
                 paired_ratio(A, B, c->trials, m_w99));
      ratio_cell(f, H->thr, s->thr, paired_ratio(A, B, c->trials, m_thr));
      ratio_cell(f, H->cpu_us, s->cpu_us, paired_ratio(A, B, c->trials, m_cpu));
      fputc('\n', f);
    }
  }
  check_t ck[16];
  int nck = collect_checks(R, ck);
  if (nck) {
    fprintf(f,
            "\nTargets (%s):\n\n| target | measured | limit | verdict |\n| --- | --: | "
            "--: | --- |\n",
            c->targets);
    for (int i = 0; i < nck; i++)
      fprintf(f, "| %s | %.2f | %s %.2f | %s |\n", ck[i].what, ck[i].value,
              ck[i].at_most ? "≤" : "≥", ck[i].limit, check_pass(&ck[i]) ? "pass" : "**miss**");
  }
  fprintf(f, "\nPer trial (round: ops/s, read P99, write P99 ms, client CPU µs/op):\n\n");
  for (int p = 0; p < c->npol; p++) {
    const trial_t *T = trials_of(R, p);
    fprintf(f, "- %s:", c->pol[p].name);
    for (int t = 0; t < c->trials; t++) {
      if (!T[t].ran) {
        fprintf(f, " %d: -;", t + 1);
        continue;
      }
      fprintf(f, " %d: %.0f, %.1f, %.1f, %.1f", t + 1, T[t].thr, T[t].lat[OP_READ].p99,
              T[t].lat[OP_WRITE].p99, T[t].cpu_us);
      if (c->pol[p].kind != K_ROUTED) {
        if (T[t].member >= 0) fprintf(f, " (member %d)", T[t].member + 1);
        else fprintf(f, " (member %s)", T[t].member == -2 ? "changed" : "?");
      }
      if (c->pol[p].kind == K_ROUTED && c->degraded_member >= 0) {
        int d = c->degraded_member;
        fprintf(f, " (EWMA by member");
        for (size_t i = 0; i < c->hl.n; i++) fprintf(f, "%s%.1f", i ? "/" : " ", T[t].ewma[i]);
        fprintf(f,
                " ms; degraded member %d: %llu ejections, out of the pool %.0f %% of the window)",
                d + 1, (unsigned long long)T[t].ejections[d],
                T[t].seconds > 0 ? T[t].out_ms[d] / (T[t].seconds * 10) : 0);
      }
      if (c->pol[p].kind == K_ROUTED && T[t].hedging)
        fprintf(f, " (hedges %llu = %.1f %% of %llu hedgeable reads, won %llu, capped %llu)",
                (unsigned long long)T[t].h_sent,
                T[t].h_elig ? 100.0 * (double)T[t].h_sent / (double)T[t].h_elig : 0.0,
                (unsigned long long)T[t].h_elig, (unsigned long long)T[t].h_won,
                (unsigned long long)T[t].h_capped);
      if (c->pol[p].kind == K_ROUTED && T[t].syncs)
        fprintf(f, " (syncs %llu for %llu reads: %.2f reads per sync)",
                (unsigned long long)T[t].syncs, (unsigned long long)T[t].m_reads,
                (double)T[t].m_reads / (double)T[t].syncs);
      if (T[t].first_err)
        fprintf(f, " (%llu errors, first %s)",
                (unsigned long long)(T[t].err[OP_READ] + T[t].err[OP_WRITE]),
                zkr_err_name(T[t].first_err));
      fputc(';', f);
    }
    fputc('\n', f);
  }
}
