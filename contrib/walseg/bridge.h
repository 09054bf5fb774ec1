/*
 * contrib/walseg/bridge.h: the one boundary between PostgreSQL (C, longjmp errors) and the
 * walseg library (C++, exceptions): no exception crosses into PostgreSQL, no elog(ERROR)
 * longjmp crosses C++ frames that own resources, and errors get PostgreSQL levels here only.
 *
 * Everything the extension asks of the library goes through the functions declared here.
 * They are implemented in C++ (bridge_*.cpp), declared noexcept, and never call PostgreSQL:
 * every exception is caught inside and returned as text in a WalsegErr, and every C++ object
 * they create is destroyed before they return. The C side (module.c, gucs.c, preallocator.c,
 * segment_create.c, sql_functions.c) includes PostgreSQL's headers and never a C++ one, and
 * turns a false return into ereport(LOG) (preallocator) or ereport(ERROR) (SQL functions)
 * only after the bridge call has returned, so no elog(ERROR) longjmp ever crosses a C++
 * frame.
 *
 * Not for: anything that takes PostgreSQL locks or reads PostgreSQL state (the C side does);
 * the bridge only sees plain values.
 * Thread-safety: every function may be called from any thread; PostgreSQL calls them from
 * one thread per process. Strings returned as `const char *` have static storage.
 * Lifetimes: pointers passed in are only read during the call.
 */
#ifndef WALSEG_BRIDGE_H
#define WALSEG_BRIDGE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define WALSEG_NOEXCEPT noexcept
extern "C" {
#else
#define WALSEG_NOEXCEPT
#endif

#define WALSEG_ERRMSG_BYTES 1024

/* A failure: the library's message (PostgreSQL-worded) and errno (0 when not a syscall's). */
typedef struct WalsegErr
{
	char		message[WALSEG_ERRMSG_BYTES];
	int			errnum;
	bool		canceled;		/* stopped because a cancel flag was set */
} WalsegErr;

/* Cancel flags the C++ side polls between chunks of long work (fills, probes, bench): any
 * non-null flag that becomes non-zero stops the work with err->canceled set. The third is
 * for PostgreSQL's postmaster_possibly_dead: a fill must not outlive the postmaster. */
typedef struct WalsegCancel
{
	const volatile sig_atomic_t *flag1;
	const volatile sig_atomic_t *flag2;
	const volatile sig_atomic_t *flag3;
} WalsegCancel;

/* ---- settings table (bridge_guc.cpp) ---- */

typedef enum WalsegGucType
{
	WALSEG_GUC_BOOL, WALSEG_GUC_INT, WALSEG_GUC_REAL, WALSEG_GUC_STRING, WALSEG_GUC_ENUM
} WalsegGucType;

typedef enum WalsegGucContext
{
	WALSEG_CTX_POSTMASTER, WALSEG_CTX_SIGHUP, WALSEG_CTX_USER
} WalsegGucContext;

typedef enum WalsegGucUnit
{
	WALSEG_UNIT_NONE, WALSEG_UNIT_BYTES, WALSEG_UNIT_KB, WALSEG_UNIT_MB,
	WALSEG_UNIT_MS, WALSEG_UNIT_S, WALSEG_UNIT_MIN
} WalsegGucUnit;

/* One entry of the library's settings table (guc_definitions.h), as plain values. */
typedef struct WalsegGucDesc
{
	const char *name;			/* "walseg.segment_size" */
	const char *description;
	bool		in_postgres;	/* the extension uses it, so registers it with PostgreSQL */
	const char *postgres_note;	/* what it means inside PostgreSQL (its long description) */
	const char *default_text;	/* the default as SHOW prints it: "2", "zero_write", "16MB" */
	WalsegGucType type;
	WalsegGucContext context;
	WalsegGucUnit unit;			/* base unit of int and real settings */
	bool		has_check;		/* int/string: the library has a check hook */
	bool		bool_default;
	int64_t		int_default, int_min, int_max;
	double		real_default, real_min, real_max;
	const char *string_default;
	int			enum_default;	/* the option's value */
	int			enum_count;
} WalsegGucDesc;

/* Number of settings; entries are 0 .. count-1 in SHOW ALL order. */
int			walseg_guc_count(void) WALSEG_NOEXCEPT;

/* The settings the extension's C side reads, so that it never spells their names. */
typedef enum WalsegSettingId
{
	WALSEG_SETTING_INIT_METHOD,
	WALSEG_SETTING_FALLOCATE_FALLBACK,
	WALSEG_SETTING_PREALLOC_SEGMENTS,
	WALSEG_SETTING_FILL_IO_CLASS
} WalsegSettingId;

/* The table index of setting `id`; -1 if the table has no such setting. */
int			walseg_guc_index(WalsegSettingId id) WALSEG_NOEXCEPT;

/* Fills *out for entry `index`; false if index is out of range. */
bool		walseg_guc_describe(int index, WalsegGucDesc *out) WALSEG_NOEXCEPT;

/* Option `option` of enum entry `index`: its name (static) and *value; NULL if out of range. */
const char *walseg_guc_enum_option(int index, int option, int *value) WALSEG_NOEXCEPT;

/* The library's check hook for an int or string entry. Returns true when fine; else copies
 * the reason ("must be a power of two") into reason. */
bool		walseg_guc_check_int(int index, int64_t value, char *reason, size_t len) WALSEG_NOEXCEPT;
bool		walseg_guc_check_string(int index, const char *value, char *reason,
									size_t len) WALSEG_NOEXCEPT;

/* What the walseg tool would say of these settings as a file's values: each value parsed and
 * checked as the tool does (names outside the table are errors too), then the library's rules
 * across settings (check_walseg_settings). Returns the number of errors and writes their
 * messages, one per line, into out, and their hints (each once), one per line, into hints
 * (empty if none), for errdetail and errhint. */
int			walseg_guc_cross_check(const char *const *names, const char *const *values, int n,
								   char *out, size_t len, char *hints,
								   size_t hints_len) WALSEG_NOEXCEPT;

/* ---- log messages of the library (bridge_guc.cpp) ---- */

typedef enum WalsegLogLevel
{
	WALSEG_LOG_DEBUG2, WALSEG_LOG_LOG, WALSEG_LOG_WARNING
} WalsegLogLevel;

/* Routes walseg::log into a queue (instead of stderr); call once per process. */
void		walseg_bridge_capture_log(void) WALSEG_NOEXCEPT;

/* Pops the oldest queued message; false when the queue is empty. */
bool		walseg_bridge_next_log(WalsegLogLevel *level, char *buf, size_t len) WALSEG_NOEXCEPT;

/* Arms the library's failpoints from WALSEG_FAILPOINTS (failpoint.h), for fault-injection
 * tests of the extension. Returns false with the reason when the variable is malformed;
 * *armed tells whether it was set at all. */
bool		walseg_bridge_arm_failpoints(bool *armed, char *why, size_t len) WALSEG_NOEXCEPT;

/* Puts the calling thread's I/O (the preallocator worker's only thread) in walseg.fill_io_class's
 * class `io_class`, its enum value (set_thread_io_class in io_priority.h). Returns false with
 * the reason, naming the setting and errno's text, on failure. */
bool		walseg_bridge_set_fill_io_class(int io_class, char *why, size_t len) WALSEG_NOEXCEPT;

/* ---- names (bridge_segment.cpp) ---- */

/* Init method names in walseg::InitMethod order; count and name by value (NULL if out of
 * range). method_ok_in_pg: the file it makes has its full size, which PostgreSQL needs
 * (zero_write, posix_fallocate, glibc_emulation, sparse; auto resolves to one of those). */
int			walseg_method_count(void) WALSEG_NOEXCEPT;
const char *walseg_method_name(int method) WALSEG_NOEXCEPT;
bool		walseg_method_ok_in_pg(int method) WALSEG_NOEXCEPT;

/* walseg::InitMethod::kAuto and an upper bound of the method count (static_asserts in
 * bridge_segment.cpp keep them true). */
#define WALSEG_METHOD_AUTO 6
#define WALSEG_MAX_METHODS 8

/* segment_file_name(): writes 24 characters and a NUL into out[25]. */
bool		walseg_lib_segment_name(uint32_t tli, uint64_t segno, uint64_t segment_size,
								char *out, WalsegErr *err) WALSEG_NOEXCEPT;

/* Strict parse of a segment file name. On failure returns false and writes into why what
 * the name is instead ("a timeline history file name", ...). */
bool		walseg_lib_parse_segment_name(const char *name, uint64_t segment_size, uint32_t *tli,
									  uint64_t *segno, char *why, size_t len) WALSEG_NOEXCEPT;

/* recycle_horizon_bounded() of recycle_horizon.h: the horizon, and in *bound which of its
 * bounds it sits at (HorizonBound: 0 max_size, 1 min_size, 2 the distance). */
#define WALSEG_BOUND_MAX_SIZE 0
#define WALSEG_BOUND_MIN_SIZE 1
#define WALSEG_BOUND_DISTANCE 2
uint64_t	walseg_recycle_horizon(uint64_t redo_segno, uint64_t segment_size,
								   uint64_t min_size, uint64_t max_size,
								   double distance, int *bound) WALSEG_NOEXCEPT;

/* DistanceEstimate::observe of recycle_horizon.h on an estimate the caller keeps: returns
 * `estimate` (bytes, 0 for none yet) after a checkpoint cycle of `bytes`, as PostgreSQL's
 * UpdateCheckPointDistanceEstimate. */
double		walseg_distance_observe(double estimate, double bytes) WALSEG_NOEXCEPT;

/* ---- making files (bridge_segment.cpp) ---- */

typedef struct WalsegFill
{
	int			method_used;	/* after a fallback it differs from the method asked for */
	uint64_t	fill_us;		/* includes paced_us */
	uint64_t	fsync_us;
	uint64_t	paced_us;		/* waited between chunks by pacing (WalsegPace) */
	uint64_t	allocated_bytes;
} WalsegFill;

/* The library's FillPacer (fill_pacer.h), opaque to C: the rate PostgreSQL's insert position
 * advances at, which background fills are paced against. Made once per worker; never freed. */
typedef struct WalsegPacer WalsegPacer;

/* A new pacer with no rate yet; NULL when out of memory. */
WalsegPacer *walseg_pacer_create(void) WALSEG_NOEXCEPT;

/* Takes the insert position seen now into the pacer (samples at most every 100 ms). */
void		walseg_pacer_observe(WalsegPacer *pacer, uint64_t insert_lsn) WALSEG_NOEXCEPT;

/* Pacing of a background fill (the library's prepare_paced, preallocator.h): before each
 * chunk the fill calls insert_lsn, feeds the pacer and waits in slices of at most 10 ms,
 * polling the cancel flags, until the chunk is due. insert_lsn is called from inside C++
 * frames, so it must not raise ERROR (or otherwise longjmp): GetXLogInsertRecPtr, a spinlock
 * read, qualifies. */
typedef struct WalsegPace
{
	uint64_t	(*insert_lsn) (void);
	WalsegPacer *pacer;
	uint64_t	pace_until_lsn;	/* the job's pace_until as an LSN; 0: not paced (the pool
								 * is behind), only the cancel flags are polled */
} WalsegPace;

/* The preallocator's job choice (the library's next_job, preallocator.h): the first segment
 * of position + 1 .. min(position + target, last_allowed) on timeline tli that has no file in
 * dir, and *pace_until_lsn, the LSN until which its fill may be paced (0: at full speed, the
 * pool is behind). Returns false when there is none (or the directory cannot be read). */
bool		walseg_next_job(const char *dir, uint32_t tli, uint64_t segment_size, uint64_t position,
							int target, uint64_t last_allowed, uint64_t *segno,
							uint64_t *pace_until_lsn) WALSEG_NOEXCEPT;

/* A segment filled and fsynced in pg_wal under a temporary name, not yet installed: the
 * library's PreparedSegment (segment_install.h), opaque to C. */
typedef struct WalsegPrepared WalsegPrepared;

/*
 * Steps 1-3 of the library's installation protocol (segment_install.h) for the segment to be
 * named `final_name` in `dir`: an exclusive temporary file (xlogtemp.<pid>.<n>, a name
 * PostgreSQL's start-up removes too), filled to size_bytes by `method` (not auto) with
 * `fallback`, fsynced. Returns the prepared segment, or NULL with the reason (EEXIST when
 * final_name exists already); no temporary file is left on failure. The caller installs it
 * (walseg_install_prepared) under the lock that orders installs, and drops it in every case
 * (walseg_drop_prepared): that removes the temporary file unless it was installed.
 * file_mode: the segment's permission bits, PostgreSQL's pg_file_create_mode (0640 in a
 * cluster made by initdb -g, as its own segments; 0600 otherwise).
 * pace: NULL for a fill as fast as possible in 1 MiB chunks (walseg_prealloc(): someone
 * waits for it); else zero_write goes in 256 kB buffered chunks with write-behind
 * (bridge_segment.cpp, kPacedFillChunkBytes) and every writing method (zero_write,
 * glibc_emulation) is paced at its progress points as described at WalsegPace.
 */
WalsegPrepared *walseg_prepare_segment(const char *dir, const char *final_name,
									   uint64_t size_bytes, int method, int fallback,
									   unsigned file_mode, WalsegCancel cancel,
									   const WalsegPace *pace, WalsegFill *out,
									   WalsegErr *err) WALSEG_NOEXCEPT;

typedef enum WalsegInstall
{
	WALSEG_INSTALLED,			/* renamed and the directory fsynced */
	WALSEG_INSTALL_EXISTS,		/* final name taken: nothing renamed */
	WALSEG_INSTALL_FAILED,		/* rename failed: nothing renamed */
	WALSEG_INSTALL_NOT_DURABLE	/* renamed, but the directory fsync failed: the name stays */
} WalsegInstall;

/* Steps 4-5: renames the prepared file to its final name without replacing anything
 * (renameat2 RENAME_NOREPLACE) and fsyncs the directory; a failed directory fsync leaves
 * the name in place (DirFsyncFailure::kKeepNewName: a backend may already have opened it).
 * The caller holds the lock that orders installs. Call at most once per prepared segment. */
WalsegInstall walseg_install_prepared(WalsegPrepared *prepared, WalsegErr *err) WALSEG_NOEXCEPT;

/* Frees a prepared segment (NULL is fine), removing its temporary file unless installed. */
void		walseg_drop_prepared(WalsegPrepared *prepared) WALSEG_NOEXCEPT;

/* Resolves walseg.init_method = auto for `dir` by the library's probe (auto_method.h), run in
 * a scratch directory inside `dir` that is removed afterwards; no walseg.auto is read or
 * written, the caller keeps the decision. pg_only: the library chooses among the full-size
 * methods (those walseg_method_ok_in_pg). Writes the method and the library's reason; logs
 * nothing (the caller logs a decision it keeps, once). */
bool		walseg_resolve_auto(const char *dir, int fallback, bool pg_only, WalsegCancel cancel,
								int *method, char *reason, size_t len,
								WalsegErr *err) WALSEG_NOEXCEPT;

/* Removes from scratch directories (walseg_scratch.<pid>) in `dir` whose process is gone (left
 * by a crash during a bench or probe) the files their owner file's journal lists, then each
 * directory that is then empty; one holding anything else is left and named in a LOG line.
 * Returns how many directories were removed; failures are ignored. */
int			walseg_remove_stale_scratch(const char *dir) WALSEG_NOEXCEPT;

/* ---- facts and measurements (bridge_bench.cpp) ---- */

typedef struct WalsegFsFacts
{
	char		fs_type[64];
	char		mount_point[256];
	uint64_t	block_size;
	uint64_t	free_bytes;
	bool		copy_on_write;
	int			fallocate_supported;	/* 1 yes, 0 no, -1 could not test (see note) */
	int			auto_method;			/* -1: could not probe (see auto_reason) */
	char		auto_reason[768];
	char		note[256];
} WalsegFsFacts;

/* At most what walseg_fs_facts' probes hold at once, in bytes: auto's probe files (one per
 * candidate method) and the fallocate test's, rounded up. */
#define WALSEG_FS_PROBE_BYTES (32 * 1024 * 1024)

/* fs_info() of `path` (a directory) and, unless `no_probe` (then the reason, which auto_reason
 * gives), a fallocate test and the auto decision (not logged), both made in a scratch
 * directory inside `path`. False only when `path` itself is unusable. */
bool		walseg_fs_facts(const char *path, const char *no_probe, int fallback, WalsegCancel cancel,
							WalsegFsFacts *out, WalsegErr *err) WALSEG_NOEXCEPT;

typedef struct WalsegBenchRow
{
	int			method;
	int			method_used;
	bool		write_phase;	/* false: create */
	int			n;
	double		p10_us, median_us, p90_us, p99_us, max_us;
	uint64_t	allocated_bytes;
} WalsegBenchRow;

#define WALSEG_BENCH_COMMIT_BYTES 8192
#define WALSEG_BENCH_WRITE_BYTES (1024 * 1024)

/*
 * The create and write phases of `walseg bench` in a scratch directory inside `dir`, removed
 * afterwards whatever happens. create: `n` durable creations per method, round-robin. write:
 * per method one new segment, then commits of WALSEG_BENCH_COMMIT_BYTES (pwrite +
 * fdatasync) over its first min(segment_size, WALSEG_BENCH_WRITE_BYTES), one per segment in
 * turn. Percentiles are nearest rank, as `walseg bench` prints them. Writes 2 rows per
 * method into rows (room for 2 * nmethods). Methods must not be auto. First of all, refuses
 * (ENOSPC, free_space.h) unless `dir`'s filesystem has room for the most the phases hold at
 * once (one segment per method) plus margin_bytes.
 */
bool		walseg_lib_bench(const char *dir, const int *methods, int nmethods, uint64_t segment_size,
						 int n, int fallback, uint64_t margin_bytes, WalsegCancel cancel,
						 WalsegBenchRow *rows, WalsegErr *err) WALSEG_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif							/* WALSEG_BRIDGE_H */
