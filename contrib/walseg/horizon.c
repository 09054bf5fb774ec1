/*
 * contrib/walseg/horizon.c: how far ahead of the insert position the preallocator may make
 * segments, as PostgreSQL's own recycling would keep them (xlog.c, XLOGfileslop).
 *
 * PostgreSQL, at the end of each checkpoint, recycles old segments into future ones up to
 * redo + (1 + checkpoint_completion_target) x 1.1 x CheckPointDistanceEstimate, clamped to
 * redo + min_wal_size - 1 .. redo + max_wal_size - 1 (in segments); the estimate follows the
 * WAL between consecutive redo pointers (UpdateCheckPointDistanceEstimate: a larger cycle at
 * once, a smaller one by 10%). walseg making segments up to there holds no more in pg_wal than
 * PostgreSQL itself would. The estimate is static in xlog.c, so the worker keeps its own from
 * the redo pointers it sees (WalsegCycles), by the library's rule (recycle_horizon.h), and
 * uses the larger of it and the WAL written since the last redo, since the next checkpoint
 * takes that cycle in at once if it is larger.
 *
 * Why not the WAL since the redo alone (as before): right after a checkpoint starts, that is
 * zero, and the horizon fell to min_wal_size (initdb's 5MB with 1 MB segments: 4 segments
 * ahead), far below what the same checkpoint's recycling keeps at its end, just when a bulk
 * load needs the pool (issue 18: PostgreSQL then made segments itself).
 * XXX: until the worker has seen a redo pointer move (the first cycle after it started), there
 * is no estimate; PostgreSQL has none then either.
 */
#include "walseg.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"

void
walseg_cycles_observe(WalsegCycles *c, XLogRecPtr redo)
{
	if (c->redo != InvalidXLogRecPtr && redo > c->redo)
		c->estimate = walseg_distance_observe(c->estimate, (double) (redo - c->redo));
	c->redo = redo;
}

/*
 * Highest segment number the preallocator may create now, with the insert position at
 * `insert`; cycles: the worker's estimate, or NULL (walseg_prealloc(): the WAL since the redo
 * only). *cap says which bound it is: max_wal_size, the floor from min_wal_size, or the
 * checkpoint distance in between.
 */
XLogSegNo
walseg_horizon(XLogRecPtr insert, const WalsegCycles *cycles, WalsegCap *cap)
{
	XLogRecPtr	redo = GetRedoRecPtr();
	XLogSegNo	redo_segno;
	double		distance = insert > redo ? (double) (insert - redo) : 0.0;
	int			bound;
	XLogSegNo	horizon;

	if (cycles != NULL && cycles->estimate > distance)
		distance = cycles->estimate;
	XLByteToSeg(redo, redo_segno, wal_segment_size);
	horizon = walseg_recycle_horizon(redo_segno, wal_segment_size, (uint64) min_wal_size_mb * 1024 * 1024,
									 (uint64) max_wal_size_mb * 1024 * 1024, distance, &bound);
	*cap = bound == WALSEG_BOUND_MAX_SIZE ? WALSEG_CAP_MAX_WAL_SIZE
		: bound == WALSEG_BOUND_MIN_SIZE ? WALSEG_CAP_MIN_WAL_SIZE
		: WALSEG_CAP_CHECKPOINT_DISTANCE;
	return horizon;
}
