/* zkroute-bench's small helpers (bench.h): the monotonic clock, sleeps
 * that notice an interrupt, the messages on stderr, each worker's random
 * numbers, and the process's CPU time. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "bench.h"

volatile sig_atomic_t interrupted;
void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleeps s seconds, in slices of at most 0.1 s so that an interrupt
 * (SIGINT, SIGTERM) is noticed promptly. */
void sleep_s(double s) {
  while (s > 0 && !interrupted) {
    double d = s < 0.1 ? s : 0.1;
    struct timespec ts = {0, (long)(d * 1e9)};
    nanosleep(&ts, NULL);
    s -= d;
  }
}

void bench_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("zkroute-bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(EXIT_FAILURE);
}

void bench_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("\nzkroute-bench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* xorshift64*: a worker's private generator, never shared. */
uint64_t rng_next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/* The process's CPU time (user + system, every thread) and context
 * switches (voluntary + involuntary) so far. */
double cpu_seconds(double *csw) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *csw = (double)ru.ru_nvcsw + (double)ru.ru_nivcsw;
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}
