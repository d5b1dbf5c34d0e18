/* OUT/results.json of zkroute-bench (bench.h; its schema is in
 * docs/benchmarks.md): the same figures as the report, per policy and per
 * trial. */
#include <math.h>

#include "bench.h"

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

static void json_num(FILE *f, double x) {
  if (isnan(x) || isinf(x)) fputs("null", f);
  else fprintf(f, "%.6g", x);
}

static void json_lat(FILE *f, const lat_t *l) {
  fprintf(f, "{\"n\": %llu, \"p50\": ", (unsigned long long)l->n);
  json_num(f, l->p50);
  fputs(", \"p90\": ", f);
  json_num(f, l->p90);
  fputs(", \"p99\": ", f);
  json_num(f, l->p99);
  fputs(", \"p999\": ", f);
  json_num(f, l->p999);
  fputs(", \"mean\": ", f);
  json_num(f, l->mean);
  fputs(", \"max\": ", f);
  json_num(f, l->max);
  fputc('}', f);
}

static void json_members(FILE *f, const cfg_t *c, const uint64_t m[N_OPS][MAXM],
                         const int64_t *recv) {
  fputc('[', f);
  for (size_t i = 0; i < c->hl.n; i++)
    fprintf(f, "%s{\"reads\": %llu, \"writes\": %llu, \"received\": %lld}", i ? ", " : "",
            (unsigned long long)m[OP_READ][i], (unsigned long long)m[OP_WRITE][i],
            (long long)recv[i]);
  fputc(']', f);
}

void write_json(FILE *f, const report_t *R) {
  const cfg_t *c = R->c;
  char a[64];
  fputs("{\n  \"schema\": \"zkroute-bench/1\",\n  \"label\": ", f);
  json_str(f, c->label ? c->label : "");
  fputs(",\n  \"command\": ", f);
  json_str(f, c->command);
  fputs(",\n  \"started\": ", f);
  json_str(f, R->started);
  fprintf(f, ",\n  \"machine\": {\"cpus\": %d, \"cpu_model\": ", R->ncpu);
  json_str(f, R->cpu_model);
  fputs(", \"kernel\": ", f);
  json_str(f, R->kernel);
  fputs(", \"load_before\": ", f);
  json_num(f, R->load_before);
  fputs(", \"load_after\": ", f);
  json_num(f, R->load_after);
  fprintf(
      f,
      "},\n  \"config\": {\"workers\": %d, \"read_fraction\": %g, \"keys\": %d, "
      "\"value_size\": %d, \"api\": \"%s\", \"rate\": %g, \"duration_s\": %g, \"warmup_s\": %g, "
      "\"trials\": %d, \"order\": \"%s\", \"sticky_member\": %d, \"degraded_member\": %d, "
      "\"library_options\": ",
      c->workers, c->read_frac, c->keys, c->value_size, c->async_api ? "async" : "sync", c->rate,
      c->duration, c->warmup, c->trials, c->rotate ? "rotated" : "fixed",
      c->sticky_member >= 0 ? c->sticky_member + 1 : 0,
      c->degraded_member >= 0 ? c->degraded_member + 1 : 0);
  json_str(f, c->opt_text);
  fputs("},\n  \"members\": [", f);
  for (size_t i = 0; i < c->hl.n; i++) {
    member_addr(c, (int)i, a, sizeof a);
    fprintf(f, "%s{\"member\": %zu, \"address\": ", i ? ", " : "", i + 1);
    json_str(f, a);
    fprintf(f, ", \"role\": \"%s\", \"degraded\": %s}", role_word(R, (int)i),
            (int)i == c->degraded_member ? "true" : "false");
  }
  fputs("],\n  \"policies\": [\n", f);
  for (int p = 0; p < c->npol; p++) {
    const summary_t *s = &R->sum[p];
    const trial_t *T = trials_of(R, p);
    fputs("    {\"name\": ", f);
    json_str(f, c->pol[p].name);
    fprintf(f, ", \"kind\": \"%s\", \"trials_run\": %d,\n     \"median\": {\"throughput\": ",
            c->pol[p].kind == K_ROUTED ? "zkroute" : "plain", s->n);
    json_num(f, s->thr);
    fputs(", \"throughput_min\": ", f);
    json_num(f, s->n ? s->thr_min : NAN);
    fputs(", \"throughput_max\": ", f);
    json_num(f, s->n ? s->thr_max : NAN);
    fputs(", \"cpu_us_per_op\": ", f);
    json_num(f, s->cpu_us);
    fputs(", \"cpu_percent\": ", f);
    json_num(f, s->cpu_pct);
    fputs(", \"context_switches_per_op\": ", f);
    json_num(f, s->csw);
    fputs(", \"watched_cpu_us_per_op\": ", f);
    json_num(f, s->srv_us);
    fputs(", \"read\": ", f);
    json_lat(f, &s->lat[OP_READ]);
    fputs(", \"write\": ", f);
    json_lat(f, &s->lat[OP_WRITE]);
    fprintf(f, "},\n     \"errors\": {\"read\": %llu, \"write\": %llu},\n     \"members\": ",
            (unsigned long long)s->err[OP_READ], (unsigned long long)s->err[OP_WRITE]);
    json_members(f, c, s->m_ops, s->m_recv);
    fputs(",\n     \"trials\": [\n", f);
    for (int t = 0; t < c->trials; t++) {
      const trial_t *x = &T[t];
      fprintf(f, "       {\"round\": %d, \"ran\": %s", t + 1, x->ran ? "true" : "false");
      if (x->ran) {
        fprintf(f, ", \"order\": %d, \"seconds\": %.3f, \"throughput\": ", x->order + 1,
                x->seconds);
        json_num(f, x->thr);
        fputs(", \"cpu_us_per_op\": ", f);
        json_num(f, x->cpu_us);
        fputs(", \"cpu_percent\": ", f);
        json_num(f, x->cpu_pct);
        fputs(", \"context_switches_per_op\": ", f);
        json_num(f, x->csw);
        fputs(", \"watched_cpu_us_per_op\": [", f);
        for (int i = 0; i < c->npids; i++) {
          if (i) fputs(", ", f);
          json_num(f, x->pid_us[i]);
        }
        fputs("], \"read\": ", f);
        json_lat(f, &x->lat[OP_READ]);
        fputs(", \"write\": ", f);
        json_lat(f, &x->lat[OP_WRITE]);
        fprintf(f, ", \"errors\": {\"read\": %llu, \"write\": %llu, \"first\": \"%s\"}",
                (unsigned long long)x->err[OP_READ], (unsigned long long)x->err[OP_WRITE],
                x->first_err ? zkr_err_name(x->first_err) : "");
        fputs(", \"members\": ", f);
        json_members(f, c, x->m_ops, x->m_recv);
        fprintf(f, ", \"connected_member\": %d, \"leader\": %d, \"pinned\": %s, \"ewma_ms\": [",
                x->member >= 0    ? x->member + 1
                : x->member == -2 ? -1
                                  : 0,
                x->leader + 1, x->pinned ? "true" : "false");
        for (size_t i = 0; i < c->hl.n; i++) {
          if (i) fputs(", ", f);
          json_num(f, x->ewma[i] >= 0 ? x->ewma[i] : NAN);
        }
        fputs("], \"in_read_pool\": [", f);
        for (size_t i = 0; i < c->hl.n; i++)
          fprintf(f, "%s%s", i ? ", " : "", x->in_pool[i] ? "true" : "false");
        fputs("], \"ejections\": [", f);
        for (size_t i = 0; i < c->hl.n; i++)
          fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)x->ejections[i]);
        fputs("], \"out_of_pool_ms\": [", f);
        for (size_t i = 0; i < c->hl.n; i++) {
          if (i) fputs(", ", f);
          json_num(f, c->pol[p].kind == K_ROUTED ? x->out_ms[i] : NAN);
        }
        fprintf(f, "], \"syncs\": %llu, \"member_reads\": %llu", (unsigned long long)x->syncs,
                (unsigned long long)x->m_reads);
        fputs(", \"load_start\": ", f);
        json_num(f, x->load_start);
        fputs(", \"load_end\": ", f);
        json_num(f, x->load_end);
      }
      fprintf(f, "}%s\n", t + 1 < c->trials ? "," : "");
    }
    fprintf(f, "     ]}%s\n", p + 1 < c->npol ? "," : "");
  }
  fputs("  ],\n  \"targets\": [", f);
  check_t ck[16];
  int nck = collect_checks(R, ck);
  for (int i = 0; i < nck; i++) {
    fputs(i ? ",\n    {\"target\": " : "\n    {\"target\": ", f);
    json_str(f, ck[i].what);
    fputs(", \"measured\": ", f);
    json_num(f, ck[i].value);
    fprintf(f, ", \"limit\": %g, \"at_most\": %s, \"pass\": %s}", ck[i].limit,
            ck[i].at_most ? "true" : "false", check_pass(&ck[i]) ? "true" : "false");
  }
  fputs(nck ? "\n  ]\n}\n" : "]\n}\n", f);
}
