/* Every internal header at once, for the server-less unit tests and the
 * fuzz targets that reach inside the library.  The library's own files
 * include the headers of the parts they use. */
#ifndef ZKR_INTERNAL_H
#define ZKR_INTERNAL_H

#include "handle.h"
#include "api.h"
#include "auth.h"
#include "barrier.h"
#include "carriers.h"
#include "completion.h"
#include "deliver.h"
#include "dispatch.h"
#include "env.h"
#include "health_apply.h"
#include "hedge_apply.h"
#include "inflight.h"
#include "member.h"
#include "membership.h"
#include "monitor.h"
#include "op.h"
#include "options.h"
#include "policy.h"
#include "registry.h"
#include "rescue.h"
#include "router.h"
#include "selector.h"
#include "session.h"
#include "srvr_apply.h"
#include "watch.h"
#include "zkapi.h"

#endif
