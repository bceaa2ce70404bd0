// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Tracepoints
 *
 * The events of trace.h are defined here, once; every other file only
 * calls trace_sroce_*(). A disabled tracepoint costs a patched-out branch.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
