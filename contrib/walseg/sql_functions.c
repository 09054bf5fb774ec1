/*
 * contrib/walseg/sql_functions.c: the SQL interface (walseg--1.0.sql declares it).
 *
 *   walseg_status()                      the preallocator's state and statistics (status.c)
 *   walseg_prealloc(n)                   create up to n future segments now      granted
 *   walseg_bench(methods, size, n)       create and write phases, scratch dir    granted
 *   walseg_fs_info(path)                 filesystem facts and auto's choice      granted
 *   walseg_segment_name(tli, segno)      PostgreSQL's segment file name
 *   walseg_parse_segment_name(name)      its strict inverse
 *
 * Bad input is an ERROR with errcode INVALID_PARAMETER_VALUE naming the argument; a failure
 * of the library is an ERROR carrying its message. Each function validates its arguments
 * first, then calls the bridge, then raises: no C++ object is alive at any ereport.
 *
 * Privileges: the three functions that create files on the server are revoked from PUBLIC
 * in walseg--1.0.sql and have no superuser check here, as PostgreSQL's own functions since
 * version 10, so that a superuser can GRANT EXECUTE on them to a role.
 */
#include "walseg.h"

#include "storage/pmsignal.h"

#include <sys/stat.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "fmgr.h"

#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#define WALSEG_BENCH_MAX_N 1000
/*
 * At most this much written by one call's create phase (n creations of segment_size per
 * method, zero_write's worst case): n and segment_size are each bounded, but their product
 * with seven methods reached terabytes, hours of I/O that only statement_timeout or a cancel
 * would stop. 64GB still allows n = 5 of every method at 1GB segments.
 */
#define WALSEG_BENCH_MAX_CREATE_MB (64 * 1024)

PG_FUNCTION_INFO_V1(walseg_prealloc);
PG_FUNCTION_INFO_V1(walseg_bench);
PG_FUNCTION_INFO_V1(walseg_fs_info);
PG_FUNCTION_INFO_V1(walseg_segment_name);
PG_FUNCTION_INFO_V1(walseg_parse_segment_name);

static WalsegCancel
query_cancel(void)
{
	WalsegCancel c = {&QueryCancelPending, &ProcDiePending, &postmaster_possibly_dead};

	/* Clears the flag when the postmaster is alive (it starts true in every child). */
	(void) PostmasterIsAlive();
	return c;
}

/* Raises the library's failure as an ERROR (after a cancel, the cancel's own ERROR). */
static void
raise_error(const char *function, const WalsegErr *err) pg_attribute_noreturn();

static void
raise_error(const char *function, const WalsegErr *err)
{
	walseg_drain_library_log(); /* what it left behind, named before the ERROR */
	if (err->canceled)
		CHECK_FOR_INTERRUPTS();
	errno = err->errnum;
	ereport(ERROR,
			(err->errnum != 0 ? errcode_for_file_access() : errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("%s failed: %s", function, err->message)));
}

/*
 * One walseg_bench() or walseg_fs_info() probe at a time in the cluster: each checks the free
 * space for itself alone, so two at once held twice what each had checked for (break-it round
 * 17 M3: three concurrent benches on a small pg_wal filled it, and PostgreSQL PANICked). A
 * transaction-level advisory lock (pg_locks: advisory, database 0, classid 0x77616c73 'wals',
 * objid 0x62656e63 'benc'), released at commit, abort or backend exit; a second caller does
 * not wait for minutes of someone else's bench, it is told.
 */
static void
lock_bench(const char *function)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, InvalidOid, 0x77616c73, 0x62656e63, 2);
	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("%s cannot run while another walseg_bench() or walseg_fs_info() runs", function),
				 errdetail("Each checks that pg_wal's filesystem has room for its own files and max_wal_size; two at once could fill it."),
				 errhint("Run it again when the other call has finished.")));
}

static void
build_tuple_desc(FunctionCallInfo fcinfo, TupleDesc *desc)
{
	if (get_call_result_type(fcinfo, NULL, desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
}

Datum
walseg_prealloc(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);
	WalsegAhead r;

	if (n < 0 || n > walseg_guc_prealloc_segments_max())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of segments %d is out of range", n),
				 errdetail("It must be between 0 and %d.", walseg_guc_prealloc_segments_max())));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("walseg_prealloc() cannot be executed during recovery.")));
	/* Not paced: the caller waits for these (the preallocator's fills are). */
	walseg_create_ahead(n, query_cancel(), NULL, &r);
	if (r.failed)
		raise_error("walseg_prealloc", &r.err);
	if (r.no_room)
		ereport(NOTICE,
				(errmsg("walseg_prealloc created %d segments and stopped: pg_wal's filesystem has " UINT64_FORMAT " MB free",
						r.created, r.free_bytes / (1024 * 1024)),
				 errdetail("walseg keeps max_wal_size (%d MB) free beyond a new segment, for PostgreSQL's own WAL.",
						   max_wal_size_mb)));
	PG_RETURN_INT32(r.created);
}

/* Init method by name, case-insensitively as the walseg.init_method setting; -1 if none. */
static int
method_by_name(const char *name)
{
	for (int m = 0; name && m < walseg_method_count(); m++)
		if (pg_strcasecmp(name, walseg_method_name(m)) == 0)
			return m;
	return -1;
}

/* Methods from a text[] (NULL: every method but auto), validated; returns the count. */
static int
bench_methods(ArrayType *arr, int *methods)
{
	Datum	   *elems;
	bool	   *elem_nulls;
	int			count;
	int			n = 0;

	if (arr == NULL)
	{
		for (int m = 0; m < walseg_method_count(); m++)
			if (m != WALSEG_METHOD_AUTO)
				methods[n++] = m;
		return n;
	}
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &elem_nulls, &count);
	if (count == 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("methods must not be empty"),
						errhint("Pass NULL to measure every method.")));
	for (int i = 0; i < count; i++)
	{
		char	   *name;
		int			m;

		if (elem_nulls[i])
			ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
							errmsg("methods must not contain NULL")));
		name = TextDatumGetCString(elems[i]);
		m = method_by_name(name);

		if (m < 0 || m == WALSEG_METHOD_AUTO)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("invalid init method \"%s\"", name),
							errhint("Valid methods are zero_write, posix_fallocate, glibc_emulation, sparse, fallocate_keep_size and none.")));
		for (int j = 0; j < n; j++)
			if (methods[j] == m)
				ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
								errmsg("init method \"%s\" is listed twice", name)));
		if (n >= WALSEG_MAX_METHODS)
			break;
		methods[n++] = m;
	}
	return n;
}

Datum
walseg_bench(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			methods[WALSEG_MAX_METHODS];
	WalsegBenchRow rows[2 * WALSEG_MAX_METHODS];
	WalsegErr	err;
	int			nmethods;
	int64		size;
	int32		n;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						errmsg("segment_size and n must not be NULL")));
	size = PG_GETARG_INT64(1);
	n = PG_GETARG_INT32(2);
	if (size < 1024 * 1024 || size > 1024 * 1024 * 1024 || (size & (size - 1)) != 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid segment_size " INT64_FORMAT, size),
						errdetail("It must be a power of two between 1MB (1048576) and 1GB (1073741824) bytes, as wal_segment_size.")));
	if (n < 1 || n > WALSEG_BENCH_MAX_N)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("n %d is out of range", n),
						errdetail("It must be between 1 and %d.", WALSEG_BENCH_MAX_N)));
	nmethods = bench_methods(PG_ARGISNULL(0) ? NULL : PG_GETARG_ARRAYTYPE_P(0), methods);
	if ((int64) n * nmethods * (size / (1024 * 1024)) > WALSEG_BENCH_MAX_CREATE_MB)
		ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						errmsg("walseg_bench would write up to " INT64_FORMAT " MB", (int64) n * nmethods * (size / (1024 * 1024))),
						errdetail("Its create phase makes n (%d) segments of segment_size (" INT64_FORMAT " MB) per method (%d); at most %d MB are allowed.",
								  n, size / (1024 * 1024), nmethods, WALSEG_BENCH_MAX_CREATE_MB),
						errhint("Give a smaller n, a smaller segment_size, or fewer methods.")));

	InitMaterializedSRF(fcinfo, 0);
	lock_bench("walseg_bench()");
	/* The margin left free: up to max_wal_size of PostgreSQL's own WAL may come meanwhile. */
	if (!walseg_lib_bench(XLOGDIR, methods, nmethods, (uint64) size, n,
						  walseg_guc_fallocate_fallback(), (uint64) max_wal_size_mb * 1024 * 1024,
						  query_cancel(), rows, &err))
		raise_error("walseg_bench", &err);
	walseg_drain_library_log();
	for (int i = 0; i < 2 * nmethods; i++)
	{
		Datum		v[10];
		bool		nulls[10] = {0};

		v[0] = CStringGetTextDatum(walseg_method_name(rows[i].method));
		v[1] = CStringGetTextDatum(rows[i].write_phase ? "write" : "create");
		v[2] = Int32GetDatum(rows[i].n);
		v[3] = Float8GetDatum(rows[i].p10_us);
		v[4] = Float8GetDatum(rows[i].median_us);
		v[5] = Float8GetDatum(rows[i].p90_us);
		v[6] = Float8GetDatum(rows[i].p99_us);
		v[7] = Float8GetDatum(rows[i].max_us);
		v[8] = CStringGetTextDatum(walseg_method_name(rows[i].method_used));
		v[9] = Int64GetDatum((int64) rows[i].allocated_bytes);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	return (Datum) 0;
}

/* Whether directory `dir` is `top` or below it (both resolved paths). */
static bool
is_below(const char *dir, const char *top)
{
	size_t		n = strlen(top);

	return strncmp(dir, top, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

/*
 * Whether `path` (an existing directory) is pg_wal or below it, links resolved: the only place
 * walseg_fs_info() writes its probe files. pg_wal is where walseg writes anyway (and may be a
 * link to another disk, initdb -X); a probe elsewhere would create and fsync files in a
 * directory PostgreSQL does not own, or in the data directory's own subdirectories; and
 * never in PostgreSQL's own subdirectories of pg_wal: archive_status is the archiver's
 * queue (break-it round 18: probe files were made and removed there), summaries PostgreSQL
 * 17's WAL summaries.
 */
static bool
may_probe(const char *path, bool *in_postgresqls)
{
	char	   *dir = realpath(path, NULL);
	char	   *wal = realpath(XLOGDIR, NULL);
	bool		under = false;

	*in_postgresqls = false;
	if (dir != NULL && wal != NULL && is_below(dir, wal))
	{
		char	   *status = psprintf("%s/archive_status", wal);
		char	   *summaries = psprintf("%s/summaries", wal);

		*in_postgresqls = is_below(dir, status) || is_below(dir, summaries);
		under = !*in_postgresqls;
		pfree(status);
		pfree(summaries);
	}
	free(dir);
	free(wal);
	return under;
}

/*
 * Why walseg_fs_info() writes no probe file in `path`, or NULL when it may: the place (see
 * may_probe), then room: the probes' files plus max_wal_size left free, as walseg_bench() and
 * the preallocator keep it (break-it round 22: the probes filled a small pg_wal filesystem to
 * 0 bytes free under a running server).
 */
static const char *
no_probe_reason(const char *path)
{
	bool		postgresqls;
	uint64		free_bytes;

	if (!may_probe(path, &postgresqls))
		return postgresqls
			? "not probed: this is PostgreSQL's own directory (archive_status or summaries), where walseg_fs_info() writes no file"
			: "not probed: walseg_fs_info() writes its probe files only in pg_wal or below it";
	if (walseg_room_beyond_max_wal_size(path, WALSEG_FS_PROBE_BYTES, &free_bytes))
		return NULL;
	return psprintf("not probed: the filesystem has " UINT64_FORMAT " MB free; the probes write up to %d MB, and walseg keeps max_wal_size (%d MB) free beyond them for PostgreSQL's own WAL",
					free_bytes / (1024 * 1024), WALSEG_FS_PROBE_BYTES / (1024 * 1024), max_wal_size_mb);
}

Datum
walseg_fs_info(PG_FUNCTION_ARGS)
{
	char	   *path = text_to_cstring(PG_GETARG_TEXT_PP(0));
	WalsegFsFacts f;
	WalsegErr	err;
	bool		postgresqls;
	struct stat st;
	TupleDesc	desc;
	Datum		v[9];
	bool		nulls[9] = {0};

	if (path[0] == '\0')
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("path must not be empty")));
	/*
	 * Facts of a directory outside the data directory (its mount point, free space) are
	 * PostgreSQL's to give as pg_stat_file gives them: to roles with pg_read_server_files.
	 */
	if (!path_is_relative_and_below_cwd(path) &&
		!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied to examine directory \"%s\"", path),
						errdetail("Only roles with privileges of the \"%s\" role may examine directories outside the data directory.",
								  "pg_read_server_files")));
	if (stat(path, &st) != 0)
		ereport(ERROR, (errcode_for_file_access(),
						errmsg("could not stat directory \"%s\": %m", path)));
	if (!S_ISDIR(st.st_mode))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("\"%s\" is not a directory", path)));
	build_tuple_desc(fcinfo, &desc);
	/* Under the lock: walseg_bench() meanwhile would take the room this checks. */
	if (may_probe(path, &postgresqls))
		lock_bench("walseg_fs_info()");
	if (!walseg_fs_facts(path, no_probe_reason(path), walseg_guc_fallocate_fallback(), query_cancel(),
						 &f, &err))
		raise_error("walseg_fs_info", &err);
	walseg_drain_library_log();
	v[0] = CStringGetTextDatum(path);
	v[1] = CStringGetTextDatum(f.fs_type);
	v[2] = CStringGetTextDatum(f.mount_point);
	v[3] = Int64GetDatum((int64) f.block_size);
	v[4] = Int64GetDatum((int64) f.free_bytes);
	v[5] = BoolGetDatum(f.copy_on_write);
	v[6] = BoolGetDatum(f.fallocate_supported == 1);
	nulls[6] = f.fallocate_supported < 0;
	v[7] = f.auto_method >= 0 ? CStringGetTextDatum(walseg_method_name(f.auto_method)) : 0;
	nulls[7] = f.auto_method < 0;
	v[8] = CStringGetTextDatum(f.auto_method >= 0 ? f.auto_reason
							   : psprintf("%s%s%s", f.auto_reason, f.note[0] ? "; " : "", f.note));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, v, nulls)));
}

Datum
walseg_segment_name(PG_FUNCTION_ARGS)
{
	int32		tli = PG_GETARG_INT32(0);
	int64		segno = PG_GETARG_INT64(1);
	char		name[MAXFNAMELEN];
	WalsegErr	err;

	if (tli < 1)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid timeline %d", tli),
						errdetail("Timelines start at 1.")));
	if (segno < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid segment number " INT64_FORMAT, segno)));
	if (!walseg_lib_segment_name((uint32) tli, (uint64) segno, wal_segment_size, name, &err))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid segment number " INT64_FORMAT, segno),
						errdetail("%s", err.message)));
	PG_RETURN_TEXT_P(cstring_to_text(name));
}

Datum
walseg_parse_segment_name(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	uint32_t	tli;
	uint64_t	segno;
	char		why[512];
	TupleDesc	desc;
	Datum		v[3];
	bool		nulls[3] = {0};
	XLogRecPtr	start;

	if (!walseg_lib_parse_segment_name(name, wal_segment_size, &tli, &segno, why, sizeof(why)))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid WAL segment file name \"%s\"", name),
						errdetail("%s", why)));
	build_tuple_desc(fcinfo, &desc);
	XLogSegNoOffsetToRecPtr(segno, 0, wal_segment_size, start);
	v[0] = Int64GetDatum((int64) tli);
	v[1] = Int64GetDatum((int64) segno);
	v[2] = LSNGetDatum(start);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, v, nulls)));
}
