/*
 * contrib/walseg/preallocator.c: the background worker that keeps walseg.prealloc_segments
 * future WAL segments ready in pg_wal, so that no committing backend has to create one
 * (PostgreSQL creates a missing segment inside XLogWrite, zero-filling it while holding
 * WALWriteLock, and preallocates at most one, at checkpoints).
 *
 * One loop: sleep on the latch (woken by SIGHUP, SIGTERM, walseg_prealloc(), or the poll
 * interval), reload settings on SIGHUP, then top up (segment_create.c). At start and after a
 * reload it says what the configuration files hold for walseg (guc_report.c): its start line
 * names each walseg value PostgreSQL refused, with the value used instead. PostgreSQL gives us
 * no event for "the insert position entered a new segment", so the worker polls it; a poll
 * is one spinlock read. It starts after recovery finishes and does nothing while recovery is
 * in progress (where PostgreSQL's own InstallXLogFileSegmentActive would be false).
 *
 * Failures: logged at LOG and kept in the shared statistics (last error); the next round
 * retries after kRetryMs. A failure never stops the server or the worker. If an ERROR escapes
 * anyway (PostgreSQL itself raised it), the worker exits and the postmaster restarts it after
 * bgw_restart_time.
 * Pacing: each poll also samples the insert position into the library's pacer (fill_pacer.h),
 * the WAL consumption rate the fills are paced against: as the library's preallocator, the
 * fill that completes the pool goes in small chunks spread over the time until the insert
 * position enters its next segment, because an unpaced fill makes concurrent commits' flushes
 * wait behind its I/O. A pool that is behind is filled at full speed, round after round
 * without the poll's sleep, until it has caught up (preallocator.h says why).
 * Postmaster death: every wait watches for it (WL_EXIT_ON_PM_DEATH) and every fill chunk and
 * pacing sleep polls postmaster_possibly_dead, so a worker whose postmaster was killed stops
 * within milliseconds, removes its temporary file and installs nothing: a postmaster started
 * again at once must not find pg_wal changing under it ("pre-existing shared memory block
 * ... is still in use" meanwhile).
 * Shutdown: SIGTERM sets ShutdownRequestPending, which the library's fill polls between
 * chunks and the pacing between sleeps of at most 10 ms, so a fill in progress stops within
 * milliseconds and its temporary file is removed. A reload (SIGHUP) stops it the same way.
 */
/* dladdr (loaded_library_path); PostgreSQL's own Linux builds define it too. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "walseg.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/pmsignal.h"
#include "utils/guc.h"

#define WALSEG_POLL_MS 100		/* how often the insert position is looked at */
#define WALSEG_RETRY_MS 5000	/* pause after a failure before trying again */

/*
 * The library the postmaster loaded, by the path it was loaded from: preloaded by an absolute
 * path to a copy outside $libdir (a build directory), the worker found by the name "walseg"
 * loaded $libdir's walseg.so as a second library, whose _PG_init failed with "attempt to
 * redefine parameter", and the worker never ran (the new-user trial). A path too long for
 * bgw_library_name falls back to the name. Also says, once, when $libdir's walseg.so (what
 * CREATE EXTENSION's functions load, MODULE_PATHNAME) is another file.
 */
static const char *
loaded_library_path(void)
{
	Dl_info		info;
	char	   *installed;
	struct stat mine,
				theirs;

	if (dladdr((void *) walseg_register_preallocator, &info) == 0 || info.dli_fname == NULL ||
		info.dli_fname[0] != '/')
		return "walseg";
	installed = psprintf("%s/walseg%s", pkglib_path, DLSUFFIX);
	if (stat(info.dli_fname, &mine) == 0 &&
		(stat(installed, &theirs) != 0 || mine.st_dev != theirs.st_dev || mine.st_ino != theirs.st_ino))
		ereport(WARNING,
				(errmsg("walseg was preloaded from \"%s\", which is not \"%s\"", info.dli_fname, installed),
				 errdetail("The preallocator runs the preloaded library; the SQL functions of CREATE EXTENSION walseg load \"%s\", which fails while another walseg library is loaded."
						   , installed),
				 errhint("Install walseg into \"%s\" and preload it as 'walseg'.", pkglib_path)));
	pfree(installed);
	return strlen(info.dli_fname) < BGW_MAXLEN ? info.dli_fname : "walseg";
}

void
walseg_register_preallocator(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = WALSEG_RESTART_S;
	strlcpy(worker.bgw_library_name, loaded_library_path(), BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "walseg_preallocator_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "walseg preallocator", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "walseg preallocator", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

static void
set_worker_pid(int pid)
{
	SpinLockAcquire(&walseg_shared->mutex);
	walseg_shared->worker_pid = pid;
	SpinLockRelease(&walseg_shared->mutex);
}

/* At any exit: an exit that did not say why (see the end of the main loop) was an ERROR. */
static void
clear_worker_pid(int code, Datum arg)
{
	(void) code;
	(void) arg;
	SpinLockAcquire(&walseg_shared->mutex);
	walseg_shared->worker_pid = 0;
	if (!ShutdownRequestPending)
		walseg_shared->worker_exit = WALSEG_WORKER_FAILED;
	SpinLockRelease(&walseg_shared->mutex);
}

/* One round with the worker's state; returns how long to sleep before the next. */
static long
top_up(WalsegWorkerView *view)
{
	WalsegCancel cancel = {&ShutdownRequestPending, &ConfigReloadPending, &postmaster_possibly_dead};
	WalsegAhead r;

	walseg_create_ahead(walseg_guc_prealloc_segments(), cancel, view, &r);
	if (!r.in_recovery)
		walseg_stats_ahead(r.ahead, r.target, r.cap, r.misses);
	/* Said once when the pool stops for want of space, and once when it goes on. */
	if (r.no_room != view->no_room)
		ereport(LOG,
				r.no_room
				? (errmsg("walseg preallocator is making no more segments: pg_wal's filesystem has " UINT64_FORMAT " MB free",
						  r.free_bytes / (1024 * 1024)),
				   errdetail("It keeps max_wal_size (%d MB) free beyond a new segment, for PostgreSQL's own WAL.",
							 max_wal_size_mb),
				   errhint("Free space on that filesystem, or lower walseg.prealloc_segments or max_wal_size."))
				: errmsg("walseg preallocator is making segments again: pg_wal's filesystem has room"));
	view->no_room = r.no_room;
	if (r.failed && r.err.canceled)
		return 0;				/* a signal arrived mid-fill: handle it, then start over */
	if (r.failed)
	{
		ereport(LOG,
				(errmsg("walseg preallocator could not create a WAL segment, retrying in %d s",
						WALSEG_RETRY_MS / 1000),
				 errdetail("%s", r.err.message)));
		return WALSEG_RETRY_MS;
	}
	/* Behind: catch up at once (a poll's 100 ms is 7 segments of a bulk load on 1 MB ones). */
	return r.behind ? 0 : WALSEG_POLL_MS;
}

/*
 * The worker's I/O class, from walseg.fill_io_class (at start and after each reload). Its fills
 * are buffered, paced, and pushed out with sync_file_range from this process, so with "idle"
 * mq-deadline and bfq dispatch them after the backends' WAL writes. In bench/pg_walswitch (3
 * runs each) the commits' median then rose 0.02 ms over stock's instead of 0.04-0.12 ms, but
 * an idle fill could starve and then finish in a burst (fills of 260-490 ms, commit stalls of
 * 200-260 ms), so the default stays best_effort.
 */
static void
apply_fill_io_class(void)
{
	char		why[512];

	if (!walseg_bridge_set_fill_io_class(walseg_guc_fill_io_class(), why, sizeof(why)))
		ereport(WARNING, (errmsg("walseg preallocator: %s", why)));
}

/*
 * The start line (at_start) or, after a reload, a line if anything was refused: each walseg
 * setting whose value in the configuration PostgreSQL refused, with the value used instead.
 * PostgreSQL's own WARNING about it comes from the postmaster while it loads walseg, before
 * anyone looks at the log; this line is where a DBA checks that the preallocator runs.
 */
static void
log_settings(bool at_start)
{
	WalsegRefused refused;

	walseg_check_config_files(at_start, &refused);
	if (at_start)
		ereport(LOG,
				(errmsg("walseg preallocator started: %d segments ahead, segment size %d bytes%s%s",
						walseg_guc_prealloc_segments(), wal_segment_size,
						refused.count > 0 ? "; invalid in the configuration, not applied: " : "",
						refused.names.data),
				 refused.count > 0 ? errdetail("%s", refused.details.data) : 0));
	else if (refused.count > 0)
		ereport(LOG,
				(errmsg("walseg preallocator reloaded its settings; invalid in the configuration, not applied: %s",
						refused.names.data),
				 errdetail("%s", refused.details.data)));
	pfree(refused.names.data);
	pfree(refused.details.data);
}

void
walseg_preallocator_main(Datum arg)
{
	long		sleep_ms = 0;
	int			removed;
	WalsegWorkerView view = {0};

	(void) arg;
	view.pacer = walseg_pacer_create();
	if (view.pacer == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	set_worker_pid(MyProcPid);
	on_shmem_exit(clear_worker_pid, 0);

	removed = walseg_remove_stale_scratch(XLOGDIR);
	walseg_drain_library_log(); /* the directories it left, each named */
	if (removed > 0)
		ereport(LOG, (errmsg("walseg removed %d scratch directories left in \"%s\" by a crash",
							 removed, XLOGDIR)));
	apply_fill_io_class();
	log_settings(true);

	while (!ShutdownRequestPending)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (ShutdownRequestPending)
			break;
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			log_settings(false);
			apply_fill_io_class();
		}
		walseg_pacer_observe(view.pacer, GetXLogInsertRecPtr());
		/*
		 * postmaster_possibly_dead starts true in every child ("check the slow way on the
		 * first call") and only PostmasterIsAlive() clears it: clear it here, or every fill
		 * would stop at its first chunk. A postmaster really gone ends the worker.
		 */
		if (!PostmasterIsAlive())
			proc_exit(1);
		sleep_ms = top_up(&view);
	}
	/*
	 * Exit status 1, not 0: the postmaster restarts a worker that exits with 1 after
	 * bgw_restart_time, unless the server is shutting down (then nothing is restarted), so a
	 * SIGTERM sent to the worker alone pauses preallocation instead of ending it until the
	 * next server start. An exit with 0 would unregister the worker for good.
	 */
	ereport(LOG, (errmsg("walseg preallocator stopping on SIGTERM; unless the server is shutting down, "
						 "it is restarted in %d s", WALSEG_RESTART_S)));
	walseg_stats_worker_exit(WALSEG_WORKER_SIGTERM);
	proc_exit(1);
}
