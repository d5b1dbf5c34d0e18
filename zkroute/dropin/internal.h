/* Every internal header at once, for the server-less unit tests and the
 * fuzz targets that reach inside the library.  The library's own files
 * include the headers of the parts they use. */
#ifndef ZKR_INTERNAL_H
#define ZKR_INTERNAL_H

#include "core/handle.h"
#include "api/api.h"
#include "core/auth.h"
#include "route/barrier.h"
#include "session/carriers.h"
#include "route/completion.h"
#include "core/deliver.h"
#include "route/dispatch.h"
#include "dropin/env.h"
#include "route/pool.h"
#include "route/hedger.h"
#include "model/inflight.h"
#include "core/member.h"
#include "session/membership.h"
#include "session/monitor.h"
#include "core/op.h"
#include "model/options.h"
#include "core/policy.h"
#include "core/registry.h"
#include "session/rescue.h"
#include "route/router.h"
#include "core/selector.h"
#include "session/session.h"
#include "session/poller.h"
#include "core/watch.h"
#include "zk/zkapi.h"

#endif
