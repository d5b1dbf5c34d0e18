/* scripts/read-path/instr.h: what readprog.c uses of instr.c, the recording hook of
 * scripts/read-path.sh (which builds both; run `scripts/read-path.sh [REV]`). */
#ifndef READ_PATH_INSTR_H
#define READ_PATH_INSTR_H
#include <stdatomic.h>
#include <stdio.h>

extern atomic_int instr_on; /* 1: record every function entry */
int instr_dump(FILE *f);    /* write the records; -1: some were lost */
void instr_reset(void);     /* forget the records */
int instr_gettid(void);     /* the calling thread's id, as the records name it */

#endif
