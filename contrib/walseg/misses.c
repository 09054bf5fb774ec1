/*
 * contrib/walseg/misses.c: counting the segments PostgreSQL needed before walseg had them
 * ready ("misses", walseg_status().misses), in the preallocator only.
 *
 * A miss is a segment the insert position entered that the worker never saw present while
 * it was still ahead of the insert position. PostgreSQL then made it itself: XLogWrite's
 * XLogFileInit created and zero-filled it while holding WALWriteLock, which is what walseg is
 * for avoiding (or, see the XXX, a checkpoint recycled an old segment into it just in time).
 *
 * How it is judged, at each look (before each job of a round and at its end, so at most a
 * fill or a poll apart):
 *   - the insert segment I is read first;
 *   - every segment s in (seen, I] was entered since the last look. It was ready if
 *     s <= ready_upto, that is, the worker saw it present while the insert position was
 *     still before it (a look counted it ahead, or the worker installed it, which
 *     install() checks ahead of the insert position under ControlFileLock);
 *   - otherwise it is a miss, except the insert segment itself while its file does not
 *     exist yet: PostgreSQL has reserved WAL in it but not opened it, so nobody has made it;
 *     it is judged again at the next look (walseg never creates the insert segment, so it
 *     is then a miss once PostgreSQL has made it);
 *   - then the consecutive segments present after I are counted ready, since each was
 *     stat'ed after I was read.
 * The first look after the worker starts only takes the baseline: what PostgreSQL did
 * before is not known.
 * Not a miss: a segment made ahead by anyone (a checkpoint's recycling, walseg_prealloc())
 * and seen by a look before the insert position reached it.
 * XXX: a segment that appeared between two looks and was entered before the second is
 * counted even when walseg_prealloc() in another backend or a checkpoint's recycling made
 * it, not XLogWrite: the file does not say who made it. Looks are one poll (100 ms), one
 * fill, or the 5 s pause after a failure apart, so this needs a segment made and used up in
 * that window; it is still a segment that was not ready ahead when walseg was expected to
 * have made it. (With looks only at the start and end of a round of up to
 * walseg.prealloc_segments fills, a bulk load's recycled segments were counted this way:
 * 96 misses where PostgreSQL's DEBUG2 log showed 48 segments it made itself.)
 */
#include "walseg.h"

#include <sys/stat.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"

/* How far after the insert position a look counts present segments (stops at a gap). */
#define WALSEG_MISSES_LOOK_SEGMENTS 4096

static bool
segment_exists(TimeLineID tli, XLogSegNo segno)
{
	char		path[MAXPGPATH];
	struct stat st;

	XLogFilePath(path, tli, segno, wal_segment_size);
	return stat(path, &st) == 0;
}

/*
 * One look with the insert segment `insert` (read before this call) on timeline `tli`;
 * returns the misses found. A change of timeline starts over with a new baseline.
 */
uint64
walseg_misses_look(WalsegMisses *m, TimeLineID tli, XLogSegNo insert)
{
	uint64		misses = 0;
	bool		pending = false;

	if (m->started && m->tli == tli && insert >= m->seen)
	{
		for (XLogSegNo s = m->seen + 1; s <= insert; s++)
		{
			if (s <= m->ready_upto)
				continue;
			if (s == insert && !segment_exists(tli, s))
				pending = true;
			else
				misses++;
		}
	}
	else
	{
		m->started = true;
		m->tli = tli;
		m->ready_upto = insert;
	}
	m->seen = pending ? insert - 1 : insert;
	/*
	 * Contiguous only: a pending insert segment is not ready, nor is anything after it yet.
	 * The count starts after what is known ready: PostgreSQL removes only segments before
	 * the redo pointer, never future ones, so those need no second stat.
	 */
	if (!pending)
	{
		XLogSegNo	from = Max(m->ready_upto, insert);

		m->ready_upto = from + walseg_count_ahead(tli, from, from + WALSEG_MISSES_LOOK_SEGMENTS);
	}
	return misses;
}

/*
 * The worker installed `segno`, checked ahead of the insert position under ControlFileLock:
 * it was ready. Only extends ready_upto when contiguous with it; a later look counts the rest.
 */
void
walseg_misses_installed(WalsegMisses *m, TimeLineID tli, XLogSegNo segno)
{
	if (!m->started || m->tli != tli || segno != m->ready_upto + 1)
		return;
	m->ready_upto = segno + walseg_count_ahead(tli, segno, segno + WALSEG_MISSES_LOOK_SEGMENTS);
}
