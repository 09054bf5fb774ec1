/*
 * contrib/walseg/walseg.h: what the C files of the extension share.
 *
 * The extension is a thin adapter over the library, which does the work: module.c loads it and owns
 * the shared statistics, gucs.c registers the library's settings with PostgreSQL,
 * guc_report.c says what the configuration files hold for them, segment_create.c creates
 * future segments in pg_wal with PostgreSQL's installation protocol, preallocator.c is the
 * background worker that keeps them ahead, and sql_functions.c is the SQL interface. The
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

/* Statistics of everything that created segments in pg_wal: the preallocator and
 * walseg_prealloc(). */
typedef struct WalsegShared
{
	slock_t		mutex;
	int			worker_pid;		/* 0 when the preallocator is not running */
	int			segments_ahead; /* consecutive future segments present at last look */
	int			target_ahead;	/* how many it wanted at last look (after the horizon) */
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
extern void walseg_stats_ahead(int ahead, int target);

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

/* ---- segment_create.c ---- */

typedef struct WalsegAhead
{
	int			created;		/* segments installed by this call */
	int			ahead;			/* consecutive future segments present afterwards */
	int			target;			/* future segments wanted, after the horizon */
	bool		in_recovery;	/* nothing done: recovery is in progress */
	bool		failed;			/* err says why; earlier creations stand */
	WalsegErr	err;
} WalsegAhead;

extern void walseg_create_ahead(int want, WalsegCancel cancel, WalsegPacer *pacer,
								WalsegAhead *result);
extern bool walseg_resolve_method(WalsegCancel cancel, int *method, WalsegErr *err);

/* ---- preallocator.c ---- */

extern void walseg_register_preallocator(void);
extern PGDLLEXPORT void walseg_preallocator_main(Datum arg);

#endif							/* WALSEG_WALSEG_H */
