// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: the loom trace system's events, instantiated (loom_trace.h)
 */

#define CREATE_TRACE_POINTS
#include "loom_trace.h"
