/*
 * contrib/walseg/walseg.h: what the C files of the extension share.
 *
 * The extension is a thin adapter over the library, which does the work: module.c loads it and owns
 * the shared statistics, gucs.c registers the library's settings with PostgreSQL,
 * guc_report.c says what the configuration files hold for them, segment_create.c creates
 * future segments in pg_wal with PostgreSQL's installation protocol, as far ahead as
 * horizon.c allows, misses.c counts the
 * segments PostgreSQL needed before they were ready, preallocator.c is the
 * background worker that keeps them ahead, and sql_functions.c and status.c are the SQL
 * interface. The
 * library is reached only through bridge.h.
 *
 * Error levels, mapped at the bridge only: the preallocator reports failures at LOG and retries
 * later; SQL functions raise ERROR; nothing here raises PANIC or FATAL.
 * Thread-safety: PostgreSQL processes are single-threaded; shared state is in WalsegShared,
 * guarded by its spinlock.
 */
#ifndef WALSEG_WALSEG_H
#define WALSEG_WALSEG_H

#include "postgres.h"

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "storage/spin.h"

#include "bridge.h"

/* ---- module.c ---- */

/* Segments made by one method (the method actually used, after any fallback). */
typedef struct WalsegMethodStats
{
	uint64		created;
	uint64		total_us;		/* fill + fsync + install, wall time, without the
								 * waits of the preallocator's pacing */
	uint64		max_us;
} WalsegMethodStats;

/* What bounds the preallocator's target (walseg_status().target_capped_by). */
typedef enum WalsegCap
{
	WALSEG_CAP_PREALLOC_SEGMENTS,	/* walseg.prealloc_segments itself */
	WALSEG_CAP_MAX_WAL_SIZE,	/* redo segment + max_wal_size - 1 */
	WALSEG_CAP_MIN_WAL_SIZE,	/* recycle horizon at its floor: redo + min_wal_size - 1 */
	WALSEG_CAP_CHECKPOINT_DISTANCE,	/* recycle horizon from the checkpoint distance:
									 * the estimate, or the WAL since the redo pointer */
	WALSEG_CAP_FREE_SPACE		/* pg_wal's filesystem: a segment more would leave less
								 * than max_wal_size free */
} WalsegCap;

/* Why the preallocator is not running, while it is not (walseg_status().state). */
typedef enum WalsegWorkerExit
{
	WALSEG_WORKER_NOT_STARTED,	/* since the server started */
	WALSEG_WORKER_SIGTERM,		/* stopped on SIGTERM; restarted after bgw_restart_time */
	WALSEG_WORKER_FAILED		/* exited on an ERROR; restarted after bgw_restart_time */
} WalsegWorkerExit;

/* Statistics of everything that created segments in pg_wal: the preallocator and
 * walseg_prealloc(). */
typedef struct WalsegShared
{
	slock_t		mutex;
	int			worker_pid;		/* 0 when the preallocator is not running */
	int			segments_ahead; /* consecutive future segments present at last look */
	int			target_ahead;	/* how many it wanted at last look (after the horizon) */
	WalsegCap	target_cap;		/* what bounded target_ahead at last look */
	uint64		misses;			/* segments PostgreSQL needed before walseg had them
								 * ready (misses.c) */
	WalsegWorkerExit worker_exit;	/* why worker_pid is 0 */
	WalsegMethodStats by_method[WALSEG_MAX_METHODS];
	uint64		last_create_us;
	TimestampTz last_create_at;
	char		last_segment[32];
	uint64		failures;
	TimestampTz last_error_at;
	char		last_error[WALSEG_ERRMSG_BYTES];
	int			auto_method;	/* auto's resolution for pg_wal, -1 until made */
	int			auto_fallback;	/* the walseg.fallocate_fallback it was made with */
} WalsegShared;

extern WalsegShared *walseg_shared; /* NULL unless preloaded */

extern void walseg_drain_library_log(void);
extern void walseg_stats_created(int method_used, uint64 us, const char *segment);
extern void walseg_stats_failed(const char *message);
extern void walseg_stats_ahead(int ahead, int target, WalsegCap cap, uint64 misses);
extern void walseg_stats_worker_exit(WalsegWorkerExit why);

/* ---- gucs.c ---- */

extern void walseg_define_gucs(bool preloaded);
extern int	walseg_guc_prealloc_segments(void);
extern int	walseg_guc_prealloc_segments_max(void);
extern int	walseg_guc_init_method(void);
extern int	walseg_guc_fallocate_fallback(void);
extern int	walseg_guc_fill_io_class(void);
extern const WalsegGucDesc *walseg_guc_find(const char *name);

/* ---- guc_report.c ---- */

/* Values of registered walseg settings in the configuration files that PostgreSQL refused. */
typedef struct WalsegRefused
{
	int			count;
	StringInfoData names;		/* "walseg.x = 'v' (using 2, the default), ..." */
	StringInfoData details;		/* one line each: where, and PostgreSQL's reason */
} WalsegRefused;

extern void walseg_check_config_files(bool at_start, WalsegRefused *refused);

/* ---- misses.c ---- */

/* The preallocator's view of which segments were ready before the insert position reached
 * them (misses.c says how it is kept); zeroed before its first round. */
typedef struct WalsegMisses
{
	bool		started;
	TimeLineID	tli;
	XLogSegNo	seen;			/* insert segment at the last look; later ones not yet judged */
	XLogSegNo	ready_upto;		/* each segment in (seen, ready_upto] was present ahead */
} WalsegMisses;

extern uint64 walseg_misses_look(WalsegMisses *m, TimeLineID tli, XLogSegNo insert);
extern void walseg_misses_installed(WalsegMisses *m, TimeLineID tli, XLogSegNo segno);

/* ---- horizon.c ---- */

/* The preallocator's view of PostgreSQL's checkpoint cycles (horizon.c); zeroed at start. */
typedef struct WalsegCycles
{
	XLogRecPtr	redo;			/* the redo pointer at the last look */
	double		estimate;		/* bytes of WAL per cycle, as CheckPointDistanceEstimate */
} WalsegCycles;

extern void walseg_cycles_observe(WalsegCycles *c, XLogRecPtr redo);
extern XLogSegNo walseg_horizon(XLogRecPtr insert, const WalsegCycles *cycles, WalsegCap *cap);

/* ---- segment_create.c ---- */

/* What the preallocator keeps between its rounds; zeroed at start. */
typedef struct WalsegWorkerView
{
	WalsegPacer *pacer;			/* the fills' pacing */
	WalsegMisses misses;		/* the miss count's books */
	WalsegCycles cycles;		/* the horizon's estimate */
	bool		no_room;		/* the last round stopped for want of free space */
} WalsegWorkerView;

typedef struct WalsegAhead
{
	int			created;		/* segments installed by this call */
	int			ahead;			/* consecutive future segments present afterwards */
	int			target;			/* future segments wanted, after the horizon */
	WalsegCap	cap;			/* what bounded target */
	uint64		misses;			/* found by this call (only with a WalsegMisses) */
	bool		in_recovery;	/* nothing done: recovery is in progress */
	bool		behind;			/* the round ended with segments still missing */
	bool		failed;			/* err says why; earlier creations stand */
	bool		no_room;		/* stopped: a segment more would leave less than
								 * max_wal_size free (cap says WALSEG_CAP_FREE_SPACE) */
	uint64		free_bytes;		/* pg_wal's free space when no_room was found */
	WalsegErr	err;
} WalsegAhead;

extern void walseg_create_ahead(int want, WalsegCancel cancel, WalsegWorkerView *worker,
								WalsegAhead *result);
extern int	walseg_count_ahead(TimeLineID tli, XLogSegNo from, XLogSegNo last);
extern bool walseg_resolve_method(WalsegCancel cancel, int *method, WalsegErr *err);
extern bool walseg_room_beyond_max_wal_size(const char *dir, uint64 bytes, uint64 *free_bytes);

/* ---- preallocator.c ---- */

#define WALSEG_RESTART_S 10		/* bgw_restart_time after an exit */

extern void walseg_register_preallocator(void);
extern PGDLLEXPORT void walseg_preallocator_main(Datum arg);

#endif							/* WALSEG_WALSEG_H */
