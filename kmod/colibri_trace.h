/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * colibri_trace.h - the module's tracepoints (docs/kernel.md,
 * "Tracepoints"), in /sys/kernel/tracing/events/colibri/.  Defined here,
 * instantiated once in colibri_trace.c (CREATE_TRACE_POINTS).
 *
 * Sessions are named by their id (a counter from 1, per module load), not
 * by a pointer.  Routing weights are the f32 bits as the routing trace of
 * SUBMIT gives them: the kernel prints no floating point.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM colibri

#if !defined(COLIBRI_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define COLIBRI_TRACE_H

#include <linux/tracepoint.h>

#include "colibri_compat.h"

DECLARE_EVENT_CLASS(colibri_req_class,
		    TP_PROTO(u64 sess, u32 n_tokens),
		    TP_ARGS(sess, n_tokens),
		    TP_STRUCT__entry(__field(u64, sess)
				     __field(u32, n_tokens)),
		    TP_fast_assign(__entry->sess = sess;
				   __entry->n_tokens = n_tokens;),
		    TP_printk("sess=%llu tokens=%u", __entry->sess, __entry->n_tokens)
);

/* A request (a piece of a SUBMIT) joined the scheduler's queue. */
DEFINE_EVENT(colibri_req_class, colibri_req_queued,
	     TP_PROTO(u64 sess, u32 n_tokens),
	     TP_ARGS(sess, n_tokens)
);

/* Its first tokens go into a forward pass. */
DEFINE_EVENT(colibri_req_class, colibri_req_started,
	     TP_PROTO(u64 sess, u32 n_tokens),
	     TP_ARGS(sess, n_tokens)
);

/* It ended: @ret is the sampled token or -errno; @latency_ns from queued. */
TRACE_EVENT(colibri_req_completed,
	    TP_PROTO(u64 sess, u32 n_tokens, int ret, u64 latency_ns),
	    TP_ARGS(sess, n_tokens, ret, latency_ns),
	    TP_STRUCT__entry(__field(u64, sess)
			     __field(u64, latency_ns)
			     __field(u32, n_tokens)
			     __field(int, ret)),
	    TP_fast_assign(__entry->sess = sess;
			   __entry->latency_ns = latency_ns;
			   __entry->n_tokens = n_tokens;
			   __entry->ret = ret;),
	    TP_printk("sess=%llu tokens=%u ret=%d latency_ns=%llu", __entry->sess,
		      __entry->n_tokens, __entry->ret, __entry->latency_ns)
);

/* One forward pass: @batch requests, @n_tokens tokens, @time_ns long. */
TRACE_EVENT(colibri_forward,
	    TP_PROTO(const char *model, u32 batch, u32 n_tokens, u64 time_ns, int ret),
	    TP_ARGS(model, batch, n_tokens, time_ns, ret),
	    TP_STRUCT__entry(__string(model, model)
			     __field(u64, time_ns)
			     __field(u32, batch)
			     __field(u32, n_tokens)
			     __field(int, ret)),
	    TP_fast_assign(colibri_trace_assign_str(model, model);
			   __entry->time_ns = time_ns;
			   __entry->batch = batch;
			   __entry->n_tokens = n_tokens;
			   __entry->ret = ret;),
	    TP_printk("model=%s batch=%u tokens=%u time_ns=%llu ret=%d", __get_str(model),
		      __entry->batch, __entry->n_tokens, __entry->time_ns, __entry->ret)
);

/*
 * The experts one token of a pass was routed to in one layer: @k pairs of
 * (expert id, weight's f32 bits) from @pairs, printed as they come.
 */
TRACE_EVENT(colibri_route,
	    TP_PROTO(u32 pos, u32 layer, u32 k, const u32 *pairs),
	    TP_ARGS(pos, layer, k, pairs),
	    TP_STRUCT__entry(__field(u32, pos)
			     __field(u32, layer)
			     __field(u32, k)
			     __dynamic_array(u32, pairs, 2 * k)),
	    TP_fast_assign(__entry->pos = pos;
			   __entry->layer = layer;
			   __entry->k = k;
			   memcpy(__get_dynamic_array(pairs), pairs, 2 * k * sizeof(u32));),
	    TP_printk("pos=%u layer=%u k=%u pairs=%s", __entry->pos, __entry->layer, __entry->k,
		      __print_array(__get_dynamic_array(pairs), 2 * __entry->k, 4))
);

/* An accelerator completed an expert job it took @time_ns earlier. */
TRACE_EVENT(colibri_accel_job,
	    TP_PROTO(const char *accel, u32 layer, u32 expert, u32 n_tokens, int status,
		     u64 time_ns),
	    TP_ARGS(accel, layer, expert, n_tokens, status, time_ns),
	    TP_STRUCT__entry(__string(accel, accel)
			     __field(u64, time_ns)
			     __field(u32, layer)
			     __field(u32, expert)
			     __field(u32, n_tokens)
			     __field(int, status)),
	    TP_fast_assign(colibri_trace_assign_str(accel, accel);
			   __entry->time_ns = time_ns;
			   __entry->layer = layer;
			   __entry->expert = expert;
			   __entry->n_tokens = n_tokens;
			   __entry->status = status;),
	    TP_printk("accel=%s layer=%u expert=%u tokens=%u status=%d time_ns=%llu",
		      __get_str(accel), __entry->layer, __entry->expert, __entry->n_tokens,
		      __entry->status, __entry->time_ns)
);

#endif /* COLIBRI_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE colibri_trace
#include <trace/define_trace.h>
