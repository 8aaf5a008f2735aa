// SPDX-License-Identifier: GPL-2.0-only
/*
 * colibri_trace.c - instantiates the tracepoints of colibri_trace.h, once.
 * A file of its own at the bottom of the call order: colibri_req.c,
 * colibri_sched.c and colibri_accel.c all emit them.
 */
#define CREATE_TRACE_POINTS
#include "colibri_trace.h"
