/* The compat header's adapters compiled inside the library's build, with
 * conversions as errors: a zkr_ call of <zkroute.h> that no longer takes
 * the arguments of the zoo_ call it stands for (or returns another type)
 * fails here, not in a program that includes <zkroute/compat.h>.  Its
 * generated adapters come from <zkroute/calls.h>; the interposer's are
 * checked the same way in zkr__preload_calls_*.  No code. */
#include "zkroute.h"

#include "model/strict.h"

#include "zkroute/compat.h"

/* ISO C wants a translation unit to declare something. */
typedef int zkr__compat_checked;
