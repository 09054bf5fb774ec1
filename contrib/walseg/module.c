/*
 * contrib/walseg/module.c: loading the extension and its shared statistics.
 *
 * _PG_init registers the settings (gucs.c) and, when loaded by shared_preload_libraries,
 * requests shared memory for WalsegShared and registers the preallocator. Loaded later (by
 * CREATE EXTENSION or a function call) it registers the settings only, and walseg_status()
 * says in its state that there is no preallocator.
 *
 * Also here: the drain of the library's log queue into elog, since the C++ side must never
 * call elog itself (bridge.h).
 */
#include "walseg.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

WalsegShared *walseg_shared = NULL;

#if PG_VERSION_NUM >= 150000
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
walseg_shmem_request(void)
{
#if PG_VERSION_NUM >= 150000
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
#endif
	RequestAddinShmemSpace(MAXALIGN(sizeof(WalsegShared)));
}

static void
walseg_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	walseg_shared = ShmemInitStruct("walseg", sizeof(WalsegShared), &found);
	if (!found)
	{
		memset(walseg_shared, 0, sizeof(WalsegShared));
		SpinLockInit(&walseg_shared->mutex);
		walseg_shared->auto_method = -1;
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Fault injection for tests: WALSEG_FAILPOINTS in the server's environment makes the
 * library's syscalls fail as described in failpoint.h. Armed in the postmaster (preloaded)
 * or the backend that loads us; every forked process counts calls on its own.
 */
static void
arm_failpoints(void)
{
	bool		armed;
	char		why[512];

	if (!walseg_bridge_arm_failpoints(&armed, why, sizeof(why)))
		ereport(WARNING, (errmsg("walseg: ignoring WALSEG_FAILPOINTS: %s", why)));
	else if (armed)
		ereport(LOG, (errmsg("walseg: failpoints armed from WALSEG_FAILPOINTS=\"%s\" (for tests only)",
							 getenv("WALSEG_FAILPOINTS"))));
}

void
_PG_init(void)
{
	walseg_bridge_capture_log();
	arm_failpoints();
	walseg_define_gucs(process_shared_preload_libraries_in_progress);
	if (!process_shared_preload_libraries_in_progress)
		return;
#if PG_VERSION_NUM >= 150000
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = walseg_shmem_request;
#else
	walseg_shmem_request();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = walseg_shmem_startup;
	walseg_register_preallocator();
}

/* Emits the library's queued messages: LOG and WARNING as they are, DEBUG2 as DEBUG2. */
void
walseg_drain_library_log(void)
{
	WalsegLogLevel level;
	char		buf[WALSEG_ERRMSG_BYTES];

	while (walseg_bridge_next_log(&level, buf, sizeof(buf)))
		ereport(level == WALSEG_LOG_DEBUG2 ? DEBUG2 : level == WALSEG_LOG_LOG ? LOG : WARNING,
				(errmsg_internal("walseg: %s", buf)));
}

void
walseg_stats_created(int method_used, uint64 us, const char *segment)
{
	WalsegMethodStats *m;
	TimestampTz now = GetCurrentTimestamp();

	if (!walseg_shared || method_used < 0 || method_used >= WALSEG_MAX_METHODS)
		return;
	SpinLockAcquire(&walseg_shared->mutex);
	m = &walseg_shared->by_method[method_used];
	m->created++;
	m->total_us += us;
	m->max_us = Max(m->max_us, us);
	walseg_shared->last_create_us = us;
	walseg_shared->last_create_at = now;
	strlcpy(walseg_shared->last_segment, segment, sizeof(walseg_shared->last_segment));
	SpinLockRelease(&walseg_shared->mutex);
}

void
walseg_stats_failed(const char *message)
{
	TimestampTz now = GetCurrentTimestamp();

	if (!walseg_shared)
		return;
	SpinLockAcquire(&walseg_shared->mutex);
	walseg_shared->failures++;
	walseg_shared->last_error_at = now;
	strlcpy(walseg_shared->last_error, message, sizeof(walseg_shared->last_error));
	SpinLockRelease(&walseg_shared->mutex);
}

void
walseg_stats_ahead(int ahead, int target, WalsegCap cap, uint64 misses)
{
	if (!walseg_shared)
		return;
	SpinLockAcquire(&walseg_shared->mutex);
	walseg_shared->segments_ahead = ahead;
	walseg_shared->target_ahead = target;
	walseg_shared->target_cap = cap;
	walseg_shared->misses += misses;
	SpinLockRelease(&walseg_shared->mutex);
}

void
walseg_stats_worker_exit(WalsegWorkerExit why)
{
	if (!walseg_shared)
		return;
	SpinLockAcquire(&walseg_shared->mutex);
	walseg_shared->worker_exit = why;
	SpinLockRelease(&walseg_shared->mutex);
}
