/*
 * contrib/walseg/segment_create.c: creating future WAL segments in pg_wal the way PostgreSQL
 * creates its own (xlog.c, XLogFileInitInternal + InstallXLogFileSegment), with the fill done
 * by the walseg library.
 *
 * One segment, by the library's own two-phase install (segment_install.h), so that the
 * protocol, its temporary names, failpoints and clean-up are one implementation:
 *   1. the library prepares "pg_wal/xlogtemp.<our pid>.<n>": filled by walseg.init_method
 *      and fsynced. PostgreSQL's start-up (RemoveTempXlogFiles) removes any xlogtemp.* a
 *      crash leaves, and so does the library's own drop of a prepared segment;
 *   2. under ControlFileLock (which PostgreSQL holds while installing and recycling
 *      segments, so the checkpointer's RemoveOldXlogFiles cannot race us) we check that
 *      recovery is not in progress, that the target is still in the future, and that its
 *      name is free, then the library renames without replacing anything and fsyncs pg_wal;
 *   3. if the name was taken meanwhile (PostgreSQL or the checkpointer made or recycled it),
 *      dropping the prepared segment removes it: an existing segment is never replaced.
 * The fill runs with no lock held (it may take long), the install holds the lock only for a
 * rename and a directory fsync, as PostgreSQL's own install does.
 *
 * Which segments: insert segment + 1 .. + walseg.prealloc_segments on the insertion
 * timeline, never beyond PostgreSQL's recycle horizon (horizon.c: what PostgreSQL's own
 * recycling would keep, from min/max_wal_size and the checkpoint distance).
 *
 * Job choice and pacing are the library's (preallocator.h, fill_pacer.h), as for its own
 * preallocator: a fill of the preallocator that completes its pool is paced against the rate
 * the insert position advances; one while the pool is behind is not, nor are
 * walseg_prealloc()'s (someone waits for them). Each job is chosen from a fresh look at the
 * insert position and the horizon, since both move while a fill runs, and a round that ends
 * still behind says so, so that the worker starts the next at once instead of polling.
 *
 * Segment size: PostgreSQL's wal_segment_size, always (walseg.segment_size is the tool's).
 * Error handling: a failure stops the round and is returned in WalsegAhead; callers decide
 * the level (LOG in the preallocator, ERROR in walseg_prealloc()). Nothing here raises ERROR
 * while a C++ object is alive: the bridge calls have returned before any ereport.
 */
#include "walseg.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"
#include "storage/pmsignal.h"
#include "utils/timestamp.h"

typedef enum CreateOutcome
{
	CREATE_DONE,				/* installed by us */
	CREATE_PRESENT,				/* the name exists: someone else made it */
	CREATE_SKIPPED,				/* no longer wanted: recovery, or the position passed it */
	CREATE_FAILED				/* err says why */
} CreateOutcome;

static XLogSegNo
insert_segno(void)
{
	XLogSegNo	segno;

	XLByteToSeg(GetXLogInsertRecPtr(), segno, wal_segment_size);
	return segno;
}

static void
set_err(WalsegErr *err, const char *fmt,...) pg_attribute_printf(2, 3);

static void
set_err(WalsegErr *err, const char *fmt,...)
{
	va_list		ap;

	memset(err, 0, sizeof(*err));
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

/*
 * Steps 2 and 3: installs `prepared` (complete and fsynced) as pg_wal/final_name, the file of
 * segment `segno`, holding ControlFileLock as PostgreSQL's InstallXLogFileSegment does.
 * Outcomes:
 *   CREATE_DONE     renamed without replacing anything and pg_wal fsynced; also when only
 *                   the directory fsync failed (err is then set, see the XXX below);
 *   CREATE_PRESENT  final_name exists (stat, or the no-replace rename said EEXIST);
 *   CREATE_SKIPPED  recovery is in progress, the insert position has passed segno, or the
 *                   postmaster is gone;
 *   CREATE_FAILED   stat or rename failed; err says why.
 * The caller drops `prepared` in every case (which removes it unless installed).
 */
static CreateOutcome
install(WalsegPrepared *prepared, const char *final_name, XLogSegNo segno, WalsegErr *err)
{
	char		path[MAXPGPATH];
	struct stat st;
	CreateOutcome outcome = CREATE_FAILED;

	snprintf(path, sizeof(path), XLOGDIR "/%s", final_name);
	/* A postmaster that died may be restarted at once: nothing more goes into its pg_wal. */
	if (!PostmasterIsAlive())
		return CREATE_SKIPPED;
	LWLockAcquire(ControlFileLock, LW_EXCLUSIVE);
	if (RecoveryInProgress() || segno < insert_segno())
		outcome = CREATE_SKIPPED;
	else if (stat(path, &st) == 0)
		outcome = CREATE_PRESENT;
	else if (errno != ENOENT)
		set_err(err, "could not stat file \"%s\": %s", path, strerror(errno));
	else
		switch (walseg_install_prepared(prepared, err))
		{
			case WALSEG_INSTALLED:
				outcome = CREATE_DONE;
				break;
			case WALSEG_INSTALL_EXISTS:
				outcome = CREATE_PRESENT;
				break;
			case WALSEG_INSTALL_NOT_DURABLE:

				/*
				 * XXX: the segment stays (the library's DirFsyncFailure::kKeepNewName). A
				 * backend may already have opened it (PostgreSQL opens existing segments
				 * without a lock), so removing it could take WAL with it. The failed
				 * directory fsync is reported; PostgreSQL's own next fsync of pg_wal meets
				 * the same device and decides for itself.
				 */
				outcome = CREATE_DONE;
				break;
			case WALSEG_INSTALL_FAILED:
				break;
		}
	LWLockRelease(ControlFileLock);
	return outcome;
}

/*
 * The pacing's view of the insert position, called by the bridge between fill chunks, that
 * is, from inside C++ frames: it must not raise ERROR, and GetXLogInsertRecPtr (a spinlock
 * read) does not.
 */
static uint64_t
pace_insert_lsn(void)
{
	return GetXLogInsertRecPtr();
}

/*
 * Creates the file of segment `segno` on timeline `tli` in pg_wal unless it exists.
 * method: a resolved init method (not auto); cancel: flags that stop the fill; pacer: the
 * preallocator's pacer, NULL for a fill of walseg_prealloc() (1 MiB chunks, O_DIRECT where
 * allowed); pace_until_lsn: the job's pacing deadline, 0 for none (see WalsegPace); fill: what
 * the fill did (method used after any fallback, times); err: the failure.
 * Outcomes: CREATE_DONE (installed; a failed directory fsync is logged and counted here),
 * CREATE_PRESENT, CREATE_SKIPPED (see install), or CREATE_FAILED with err filled (fill or
 * install failed; err->canceled when a cancel flag stopped the fill). The temporary file
 * is gone in every case but CREATE_DONE.
 */
static CreateOutcome
create_one(TimeLineID tli, XLogSegNo segno, int method, WalsegCancel cancel, WalsegPacer *pacer,
		   uint64 pace_until_lsn, WalsegFill *fill, WalsegErr *err)
{
	char		final_name[MAXFNAMELEN];
	char		path[MAXPGPATH];
	struct stat st;
	volatile CreateOutcome outcome = CREATE_FAILED;	/* set inside PG_TRY */
	WalsegPace	pace;
	WalsegPrepared *prepared;
	instr_time	install_start;
	instr_time	install_time;

	XLogFileName(final_name, tli, segno, wal_segment_size);
	snprintf(path, sizeof(path), XLOGDIR "/%s", final_name);
	if (stat(path, &st) == 0)
		return CREATE_PRESENT;
	pace.insert_lsn = pace_insert_lsn;
	pace.pacer = pacer;
	pace.pace_until_lsn = pace_until_lsn;
	/* pg_file_create_mode: 0640 in a group-access cluster (initdb -g), as XLogFileInit's. */
	prepared = walseg_prepare_segment(XLOGDIR, final_name, wal_segment_size, method,
									  walseg_guc_fallocate_fallback(),
									  (unsigned) pg_file_create_mode, cancel,
									  pacer ? &pace : NULL, fill, err);
	if (prepared == NULL)
		return err->errnum == EEXIST ? CREATE_PRESENT : CREATE_FAILED;
	INSTR_TIME_SET_CURRENT(install_start);
	/* Nothing between prepare and drop raises ERROR, but a prepared file must never outlive a
	 * longjmp of this process either (PostgreSQL's start-up would remove it, much later). */
	PG_TRY();
	{
		outcome = install(prepared, final_name, segno, err);
	}
	PG_FINALLY();
	{
		walseg_drop_prepared(prepared);
	}
	PG_END_TRY();
	INSTR_TIME_SET_CURRENT(install_time);
	INSTR_TIME_SUBTRACT(install_time, install_start);
	if (outcome == CREATE_DONE && err->message[0] != '\0')
	{
		ereport(LOG,
				(errmsg("walseg: installed WAL segment \"%s\", but could not make its name durable",
						final_name),
				 errdetail("%s", err->message)));
		walseg_stats_failed(err->message);
		memset(err, 0, sizeof(*err));
	}
	else if (outcome == CREATE_DONE)
		/* The times say where a slow creation spent them (bench/pg_walswitch reads them). */
		ereport(DEBUG2,
				(errmsg_internal("walseg: installed WAL segment \"%s\" by %s: fill %.1f ms "
								 "(%.1f ms of it paced), fsync %.1f ms, install %.1f ms",
								 final_name, walseg_method_name(fill->method_used),
								 fill->fill_us / 1000.0, fill->paced_us / 1000.0,
								 fill->fsync_us / 1000.0, INSTR_TIME_GET_MILLISEC(install_time))));
	return outcome;
}

/*
 * The init method to use now: walseg.init_method, with auto resolved once for pg_wal by the
 * library's probe and rule, which caches no file in pg_wal (README.md): the decision is kept
 * here, shared by all processes through WalsegShared when preloaded.
 */
bool
walseg_resolve_method(WalsegCancel cancel, int *method, WalsegErr *err)
{
	static int	local_method = -1;
	static int	local_fallback = -1;
	int			fallback = walseg_guc_fallocate_fallback();
	char		reason[768];

	*method = walseg_guc_init_method();
	if (*method != WALSEG_METHOD_AUTO)
		return true;
	if (walseg_shared)
	{
		SpinLockAcquire(&walseg_shared->mutex);
		if (walseg_shared->auto_fallback == fallback)
			local_method = walseg_shared->auto_method;
		SpinLockRelease(&walseg_shared->mutex);
	}
	if (local_method >= 0 && local_fallback == fallback)
	{
		*method = local_method;
		return true;
	}
	if (!walseg_resolve_auto(XLOGDIR, fallback, true, cancel, method, reason, sizeof(reason), err))
		return false;
	ereport(LOG, (errmsg("walseg: walseg.init_method = auto chose %s for \"%s\"",
						 walseg_method_name(*method), XLOGDIR),
				  errdetail("%s", reason)));
	local_method = *method;
	local_fallback = fallback;
	if (walseg_shared)
	{
		SpinLockAcquire(&walseg_shared->mutex);
		walseg_shared->auto_method = *method;
		walseg_shared->auto_fallback = fallback;
		SpinLockRelease(&walseg_shared->mutex);
	}
	return true;
}

/*
 * Someone's file at a future segment name, said once per name and process: PostgreSQL will
 * use it as it is when WAL reaches it (stock behaviour), but it is no segment made ahead.
 */
static void
note_not_a_segment(const char *path, const struct stat *st)
{
	static char last_noted[MAXPGPATH];

	if (strcmp(last_noted, path) == 0)
		return;
	strlcpy(last_noted, path, sizeof(last_noted));
	ereport(LOG,
			(errmsg("walseg: \"%s\" has the name of a future WAL segment but is not one: it is %s",
					path, S_ISREG(st->st_mode) ? psprintf("%lld bytes, not wal_segment_size (%d bytes)",
														   (long long) st->st_size, wal_segment_size)
					: "not a regular file"),
			 errdetail("The preallocator counts no segment at or past it. PostgreSQL writes into it as it is when WAL reaches it."),
			 errhint("Move it out of pg_wal unless it was put there on purpose.")));
}

/*
 * Counts the future segments present right after `from`, up to `last`: regular files of
 * wal_segment_size only (break-it round 24 L1: two 10-byte files planted at future names were
 * counted in segments_ahead, and nothing said so).
 */
int
walseg_count_ahead(TimeLineID tli, XLogSegNo from, XLogSegNo last)
{
	int			ahead = 0;

	for (XLogSegNo segno = from + 1; segno <= last; segno++)
	{
		char		path[MAXPGPATH];
		struct stat st;

		XLogFilePath(path, tli, segno, wal_segment_size);
		if (lstat(path, &st) != 0)
			break;
		if (!S_ISREG(st.st_mode) || st.st_size != wal_segment_size)
		{
			note_not_a_segment(path, &st);
			break;
		}
		ahead++;
	}
	return ahead;
}

/*
 * One look, before each job and at the end of a round: the insert segment (*first), the
 * horizon and the bounded target (*last, r->target, r->cap) for `want` segments ahead, and,
 * for the preallocator (worker not NULL), the misses found and the redo pointer's move.
 */
static void
look(int want, TimeLineID tli, WalsegWorkerView *worker, WalsegAhead *r, XLogSegNo *first,
	 XLogSegNo *last)
{
	XLogRecPtr	insert = GetXLogInsertRecPtr();
	XLogSegNo	limit;

	XLByteToSeg(insert, *first, wal_segment_size);
	if (worker)
		walseg_cycles_observe(&worker->cycles, GetRedoRecPtr());
	limit = walseg_horizon(insert, worker ? &worker->cycles : NULL, &r->cap);
	*last = Min(*first + (XLogSegNo) Max(want, 0), limit);
	if (*first + (XLogSegNo) Max(want, 0) <= limit)
		r->cap = WALSEG_CAP_PREALLOC_SEGMENTS;
	r->target = *last > *first ? (int) (*last - *first) : 0;
	if (worker)
		r->misses += walseg_misses_look(&worker->misses, tli, *first);
}

/*
 * Whether the filesystem of `dir` keeps max_wal_size free after `bytes` more: the room
 * PostgreSQL's own WAL may take before a checkpoint recycles, which walseg_bench() keeps too
 * (its margin). The one rule for what walseg writes into pg_wal's filesystem: the pool's next
 * segment and walseg_fs_info()'s probes. Segments made ahead are WAL PostgreSQL will write,
 * but made early: on a filesystem shared with the data, or a small one, a pool filled to the
 * last block gave every other writer ENOSPC from the server's start and PostgreSQL a PANIC at
 * its next segment (break-it round 21). Sets *free_bytes (statvfs f_bavail, in bytes). A
 * statvfs failure answers true: the write that follows reports what is wrong.
 */
bool
walseg_room_beyond_max_wal_size(const char *dir, uint64 bytes, uint64 *free_bytes)
{
	struct statvfs vfs;

	*free_bytes = 0;
	if (statvfs(dir, &vfs) != 0)
		return true;
	*free_bytes = (uint64) vfs.f_bavail * (uint64) vfs.f_frsize;
	return *free_bytes >= bytes + (uint64) max_wal_size_mb * 1024 * 1024;
}

/* Books a segment this round installed: statistics, and the miss count's knowledge of it. */
static void
record_created(TimeLineID tli, XLogSegNo segno, const WalsegFill *fill, TimestampTz start,
			   WalsegWorkerView *worker)
{
	char		name[MAXFNAMELEN];
	long		secs;
	int			usecs;
	uint64		us;

	TimestampDifference(start, GetCurrentTimestamp(), &secs, &usecs);
	us = (uint64) secs * 1000000 + usecs;
	/* The pacing's deliberate waits are not creation cost. */
	us = us > fill->paced_us ? us - fill->paced_us : 0;
	XLogFileName(name, tli, segno, wal_segment_size);
	walseg_stats_created(fill->method_used, us, name);
	if (worker)
		walseg_misses_installed(&worker->misses, tli, segno);
}

/*
 * Makes sure the `want` segments after the current insert segment exist (bounded by the
 * horizon): the library's step (preallocator.h) chooses each job, PostgreSQL's view of the
 * pool given: the insert segment, the target, the horizon, pg_wal's names, all looked at
 * afresh before each job. worker: NULL (walseg_prealloc(): unpaced, no miss count), or the
 * preallocator's state: its pacer, its miss count (a look before each job and at the end,
 * and each install, misses.c) and its checkpoint cycles (horizon.c). At most `want` jobs a
 * round. Fills *r: how many were created, how many are present, the bounded target and what
 * bounded it, the misses found, whether segments are still missing (behind), and the first
 * failure, which ends the round.
 */
void
walseg_create_ahead(int want, WalsegCancel cancel, WalsegWorkerView *worker, WalsegAhead *r)
{
	XLogSegNo	first;
	XLogSegNo	last;
	TimeLineID	tli;
	int			method = -1;

	memset(r, 0, sizeof(*r));
	if (RecoveryInProgress())
	{
		r->in_recovery = true;
		return;
	}
	tli = GetWALInsertionTimeLine();
	for (int jobs = 0;; jobs++)
	{
		WalsegFill	fill;
		TimestampTz start;
		CreateOutcome outcome;
		uint64_t	segno;
		uint64_t	pace_until;

		look(want, tli, worker, r, &first, &last);
		if (!walseg_next_job(XLOGDIR, tli, wal_segment_size, first, r->target, last, &segno,
							 &pace_until))
			break;				/* the pool is full, up to the horizon */
		/* Until this job is done, the pool is behind: a round ending here says so. */
		r->behind = true;
		if (jobs >= Max(want, 0))
			break;
		if (method < 0 && !walseg_resolve_method(cancel, &method, &r->err))
		{
			r->failed = true;
			break;
		}
		if (!walseg_room_beyond_max_wal_size(XLOGDIR, (uint64) wal_segment_size, &r->free_bytes))
		{
			/* Not behind: nothing to catch up until space is freed (a poll's pace). */
			r->no_room = true;
			r->behind = false;
			r->cap = WALSEG_CAP_FREE_SPACE;
			break;
		}
		start = GetCurrentTimestamp();
		outcome = create_one(tli, segno, method, cancel, worker ? worker->pacer : NULL,
							 worker ? pace_until : 0, &fill, &r->err);
		walseg_drain_library_log();
		if (outcome == CREATE_SKIPPED)
			break;				/* recovery, the position passed it, or no postmaster */
		if (outcome == CREATE_FAILED)
		{
			r->failed = true;
			break;
		}
		r->behind = false;
		if (outcome == CREATE_DONE)
		{
			record_created(tli, segno, &fill, start, worker);
			r->created++;
		}
	}
	r->ahead = walseg_count_ahead(tli, first, last);
	if (r->failed && !r->err.canceled)
		walseg_stats_failed(r->err.message);
}
