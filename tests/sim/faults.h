/* The seeded fault schedule (faults.c). */
#ifndef SIM_FAULTS_H
#define SIM_FAULTS_H

#include <stdint.h>

#include "history.h"

/* Schedules 3 to 6 incidents in [0.3 s, span - 0.5 s]; returns how many. */
int faults_plan(hist_t *h, uint64_t span, uint64_t session_ns);
/* 1 while an incident lasts (a leader down or hung, a lag, a cut...). */
int faults_active(void);
/* Ends every incident: restarts, resumes, heals links and partitions. */
void faults_heal(void);

#endif
