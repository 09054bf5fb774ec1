/*
 * contrib/walseg/status.c: walseg_status(), the preallocator's state and shared statistics
 * (walseg--1.0.sql declares its columns).
 *
 * It never raises ERROR for a missing preallocator: without shared_preload_libraries the row
 * says so in `state` and every other column is NULL; in recovery (where the worker does not
 * run, it starts once recovery has finished) the pool's columns are NULL rather than zeros.
 */
#include "walseg.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(walseg_status);

/* {"zero_write": {"segments": 3, "avg_ms": 11.2, "max_ms": 20.5}, ...} */
static Datum
by_method_json(const WalsegMethodStats *by_method)
{
	StringInfoData buf;
	bool		first = true;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int m = 0; m < walseg_method_count() && m < WALSEG_MAX_METHODS; m++)
	{
		if (by_method[m].created == 0)
			continue;
		appendStringInfo(&buf, "%s\"%s\": {\"segments\": " UINT64_FORMAT ", \"avg_ms\": %.3f, \"max_ms\": %.3f}",
						 first ? "" : ", ", walseg_method_name(m), by_method[m].created,
						 by_method[m].total_us / 1000.0 / by_method[m].created,
						 by_method[m].max_us / 1000.0);
		first = false;
	}
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

static const char *
cap_name(WalsegCap cap)
{
	switch (cap)
	{
		case WALSEG_CAP_PREALLOC_SEGMENTS:
			return "walseg.prealloc_segments";
		case WALSEG_CAP_MAX_WAL_SIZE:
			return "max_wal_size";
		case WALSEG_CAP_MIN_WAL_SIZE:
			return "min_wal_size";
		case WALSEG_CAP_CHECKPOINT_DISTANCE:
			return "checkpoint distance";
		case WALSEG_CAP_FREE_SPACE:
			return "free space (max_wal_size kept free)";
	}
	return "unknown";
}

/* walseg_status().state when preloaded (see walseg--1.0.sql). */
static const char *
state_text(const WalsegShared *s, bool in_recovery)
{
	if (in_recovery)
		return "in recovery";
	if (s->worker_pid != 0)
		return "running";
	switch (s->worker_exit)
	{
		case WALSEG_WORKER_NOT_STARTED:
			return "not running: not started yet (it starts once the server accepts connections)";
		case WALSEG_WORKER_SIGTERM:
			return psprintf("not running: stopped on SIGTERM; the postmaster starts it again within %d s",
							WALSEG_RESTART_S);
		case WALSEG_WORKER_FAILED:
			return psprintf("not running: exited on an error (see the server log); the postmaster starts it again within %d s",
							WALSEG_RESTART_S);
	}
	return "not running";
}

Datum
walseg_status(PG_FUNCTION_ARGS)
{
	WalsegShared s;
	TupleDesc	desc;
	Datum		v[16];
	bool		nulls[16];
	uint64		created = 0,
				total_us = 0,
				max_us = 0;
	bool		in_recovery;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	/* A catalog made by an older walseg--1.0.sql would take these values for other types. */
	if (desc->natts != lengthof(v))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("function walseg_status returns %d columns, but the loaded walseg library returns %d",
						desc->natts, (int) lengthof(v)),
				 errhint("Recreate the extension with DROP EXTENSION walseg and CREATE EXTENSION walseg.")));
	if (!walseg_shared)
	{
		memset(nulls, true, sizeof(nulls));
		v[0] = CStringGetTextDatum("not preloaded: add walseg to shared_preload_libraries");
		nulls[0] = false;
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, v, nulls)));
	}
	memset(nulls, false, sizeof(nulls));
	SpinLockAcquire(&walseg_shared->mutex);
	memcpy(&s, walseg_shared, sizeof(s));
	SpinLockRelease(&walseg_shared->mutex);
	in_recovery = RecoveryInProgress();
	for (int m = 0; m < WALSEG_MAX_METHODS; m++)
	{
		created += s.by_method[m].created;
		total_us += s.by_method[m].total_us;
		max_us = Max(max_us, s.by_method[m].max_us);
	}
	v[0] = CStringGetTextDatum(state_text(&s, in_recovery));
	v[1] = Int32GetDatum(s.worker_pid);
	nulls[1] = s.worker_pid == 0;
	v[2] = Int32GetDatum(s.segments_ahead);
	nulls[2] = in_recovery;
	v[3] = Int32GetDatum(s.target_ahead);
	nulls[3] = in_recovery;
	v[4] = CStringGetTextDatum(cap_name(s.target_cap));
	nulls[4] = in_recovery;
	v[5] = Int64GetDatum((int64) created);
	v[6] = Int64GetDatum((int64) s.misses);
	v[7] = by_method_json(s.by_method);
	v[8] = Float8GetDatum(created ? total_us / 1000.0 / created : 0);
	nulls[8] = created == 0;
	v[9] = Float8GetDatum(max_us / 1000.0);
	nulls[9] = created == 0;
	v[10] = CStringGetTextDatum(s.last_segment);
	nulls[10] = created == 0;
	v[11] = TimestampTzGetDatum(s.last_create_at);
	nulls[11] = created == 0;
	v[12] = Int64GetDatum((int64) s.failures);
	v[13] = CStringGetTextDatum(s.last_error);
	nulls[13] = s.failures == 0;
	v[14] = TimestampTzGetDatum(s.last_error_at);
	nulls[14] = s.failures == 0;
	v[15] = s.auto_method >= 0 ? CStringGetTextDatum(walseg_method_name(s.auto_method)) : 0;
	nulls[15] = s.auto_method < 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, v, nulls)));
}
