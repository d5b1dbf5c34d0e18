/* The metrics endpoint (zkr__metrics_*; docs/operations.md): GET /metrics over
 * HTTP, the Prometheus text of every handle of the process whose metrics
 * option names an address, served by libmicrohttpd on one thread from the
 * first such handle's zkr_init to the last one's zkr_close.  Also the
 * numbering of handles (their handle label). */
#ifndef ZKR_METRICS_H
#define ZKR_METRICS_H

#include <sys/socket.h>

struct zkr;

/* The next handle number of the process: 1, 2, ...
 * Init.  @locks none (atomic). */
unsigned zkr__metrics_serial(void);
/* zkr_init: a handle whose metrics option is set is listed, and the
 * endpoint is started if it does not run; a failure (bad address, port in
 * use, no libmicrohttpd) is one line on stderr, and the handle runs on.
 * Init.  @locks metrics life_mu, then metrics mu. */
void zkr__metrics_join(struct zkr *z);
/* zkr_close, first: off the list; the last one stops the endpoint.
 * The close path.  @locks metrics life_mu, then metrics mu. */
void zkr__metrics_leave(struct zkr *z);

/* The endpoint's limits: connections at once (more are closed at
 * accept), and seconds a connection may stay idle. */
#define ZKR__METRICS_CONNECTIONS 8
#define ZKR__METRICS_TIMEOUT_S 5

#endif
