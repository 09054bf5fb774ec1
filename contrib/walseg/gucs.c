/*
 * contrib/walseg/gucs.c: registers with PostgreSQL the library's settings that the extension
 * uses.
 *
 * One source of truth: names, descriptions, types, base units, bounds, defaults, enum values,
 * check hooks, whether PostgreSQL uses a setting and what it means there all come from the
 * library's table (guc_definitions.h) through bridge.h; this file only maps them onto
 * DefineCustom*Variable and reserves the "walseg" prefix, so SHOW, SET, ALTER SYSTEM and
 * pg_settings treat them as built-in settings.
 *
 * Registered: only the entries the table marks as used inside PostgreSQL (walseg.init_method,
 * walseg.fallocate_fallback, walseg.prealloc_segments, walseg.fill_io_class). The others
 * describe the walseg tool's own WAL, and PostgreSQL has its own setting for each (the segment
 * size is always wal_segment_size): registered, SHOW would print a value nothing inside
 * PostgreSQL uses (16MB on a 1 MB-segment cluster). Because the prefix is reserved, a
 * settings file written for the tool can still be included in postgresql.conf: PostgreSQL
 * applies the settings it has and refuses the tool's names as invalid (a WARNING at start, LOG
 * at a reload), and the preallocator says which ones those are (guc_report.c).
 *
 * Mapping: library base unit B/kB/MB/ms/s/min -> GUC_UNIT_BYTE/KB/MB/MS/S/MIN, so PostgreSQL
 * parses units exactly as the tool does (case-sensitive, multiplier 1024, a number without
 * unit in the base unit, fractions rounded). Contexts: postmaster -> PGC_POSTMASTER,
 * sighup -> PGC_SIGHUP, user -> PGC_SUSET (as PostgreSQL's wal_init_zero and wal_recycle).
 * Additions of the extension (the library's table stays the tool's truth):
 *   - walseg.init_method refuses none and fallocate_keep_size: they make files shorter than
 *     the segment size, which PostgreSQL's WAL reader and archive tools cannot use;
 *   - without shared_preload_libraries, postmaster-context settings are registered read-only
 *     (PGC_INTERNAL): PostgreSQL refuses to create PGC_POSTMASTER settings after start. (No
 *     registered setting has that context today; the rule stays for the next one.)
 */
#include "walseg.h"

#include <limits.h>

#include "utils/guc.h"
#include "utils/memutils.h"

#define WALSEG_MAX_GUCS 16
#define WALSEG_MAX_ENUM_OPTIONS 16

static WalsegGucDesc descs[WALSEG_MAX_GUCS];
static int	nsettings;

/* Storage PostgreSQL writes the current values into, one slot per table entry. */
static bool bool_vars[WALSEG_MAX_GUCS];
static int	int_vars[WALSEG_MAX_GUCS];
static double real_vars[WALSEG_MAX_GUCS];
static char *string_vars[WALSEG_MAX_GUCS];
static struct config_enum_entry enum_options[WALSEG_MAX_GUCS][WALSEG_MAX_ENUM_OPTIONS + 1];

static int	idx_prealloc_segments = -1;
static int	idx_init_method = -1;
static int	idx_fallocate_fallback = -1;
static int	idx_fill_io_class = -1;

/* The long description: the table's note on PostgreSQL, and why a setting is read-only. */
static const char *
long_description(const WalsegGucDesc *d, bool readonly)
{
	if (!readonly)
		return d->postgres_note;
	/* PostgreSQL keeps the pointer for the life of the process. */
	return MemoryContextStrdup(TopMemoryContext,
							   psprintf("%s Read-only because walseg is not in shared_preload_libraries.",
										d->postgres_note));
}

static int
unit_flags(WalsegGucUnit unit)
{
	switch (unit)
	{
		case WALSEG_UNIT_BYTES:
			return GUC_UNIT_BYTE;
		case WALSEG_UNIT_KB:
			return GUC_UNIT_KB;
		case WALSEG_UNIT_MB:
			return GUC_UNIT_MB;
		case WALSEG_UNIT_MS:
			return GUC_UNIT_MS;
		case WALSEG_UNIT_S:
			return GUC_UNIT_S;
		case WALSEG_UNIT_MIN:
			return GUC_UNIT_MIN;
		case WALSEG_UNIT_NONE:
			break;
	}
	return 0;
}

static GucContext
pg_context(WalsegGucContext c, bool preloaded)
{
	switch (c)
	{
		case WALSEG_CTX_POSTMASTER:
			return preloaded ? PGC_POSTMASTER : PGC_INTERNAL;
		case WALSEG_CTX_SIGHUP:
			return PGC_SIGHUP;
		case WALSEG_CTX_USER:
			break;
	}
	return PGC_SUSET;
}

/* ---- check hooks: the library's, reached through one trampoline per table slot ---- */

static bool
check_int(int i, int *newval)
{
	char		reason[256];

	if (walseg_guc_check_int(i, *newval, reason, sizeof(reason)))
		return true;
	GUC_check_errdetail("\"%s\" %s.", descs[i].name, reason);
	return false;
}

static bool
check_string(int i, char **newval)
{
	char		reason[256];

	if (walseg_guc_check_string(i, *newval, reason, sizeof(reason)))
		return true;
	GUC_check_errdetail("\"%s\" %s.", descs[i].name, reason);
	return false;
}

static bool
check_enum(int i, int *newval)
{
	if (i != idx_init_method || walseg_method_ok_in_pg(*newval))
		return true;
	GUC_check_errdetail("Inside PostgreSQL every WAL segment must have its full size; \"%s\" makes shorter files.",
						walseg_method_name(*newval));
	GUC_check_errhint("Use zero_write, posix_fallocate, glibc_emulation, sparse or auto.");
	return false;
}

#define WALSEG_TRAMPOLINES(i) \
	static bool check_int_##i(int *v, void **e, GucSource s) { (void) e; (void) s; return check_int(i, v); } \
	static bool check_string_##i(char **v, void **e, GucSource s) { (void) e; (void) s; return check_string(i, v); } \
	static bool check_enum_##i(int *v, void **e, GucSource s) { (void) e; (void) s; return check_enum(i, v); }
WALSEG_TRAMPOLINES(0) WALSEG_TRAMPOLINES(1) WALSEG_TRAMPOLINES(2) WALSEG_TRAMPOLINES(3)
WALSEG_TRAMPOLINES(4) WALSEG_TRAMPOLINES(5) WALSEG_TRAMPOLINES(6) WALSEG_TRAMPOLINES(7)
WALSEG_TRAMPOLINES(8) WALSEG_TRAMPOLINES(9) WALSEG_TRAMPOLINES(10) WALSEG_TRAMPOLINES(11)
WALSEG_TRAMPOLINES(12) WALSEG_TRAMPOLINES(13) WALSEG_TRAMPOLINES(14) WALSEG_TRAMPOLINES(15)

#define WALSEG_SLOT(i) check_int_##i, check_string_##i, check_enum_##i
static const struct
{
	GucIntCheckHook int_check;
	GucStringCheckHook string_check;
	GucEnumCheckHook enum_check;
}			hooks[WALSEG_MAX_GUCS] = {
	{WALSEG_SLOT(0)}, {WALSEG_SLOT(1)}, {WALSEG_SLOT(2)}, {WALSEG_SLOT(3)},
	{WALSEG_SLOT(4)}, {WALSEG_SLOT(5)}, {WALSEG_SLOT(6)}, {WALSEG_SLOT(7)},
	{WALSEG_SLOT(8)}, {WALSEG_SLOT(9)}, {WALSEG_SLOT(10)}, {WALSEG_SLOT(11)},
	{WALSEG_SLOT(12)}, {WALSEG_SLOT(13)}, {WALSEG_SLOT(14)}, {WALSEG_SLOT(15)},
};

/* ---- registration ---- */

static void
define_enum(int i, const WalsegGucDesc *d, const char *long_desc, GucContext ctx)
{
	if (d->enum_count > WALSEG_MAX_ENUM_OPTIONS)
		elog(ERROR, "walseg setting \"%s\" has too many options", d->name);
	for (int o = 0; o < d->enum_count; o++)
	{
		int			value;

		enum_options[i][o].name = walseg_guc_enum_option(i, o, &value);
		enum_options[i][o].val = value;
		/* Refused values stay parseable (for a clear message) but are not offered. */
		enum_options[i][o].hidden = i == idx_init_method && !walseg_method_ok_in_pg(value);
	}
	enum_options[i][d->enum_count].name = NULL;
	DefineCustomEnumVariable(d->name, d->description, long_desc, &int_vars[i], d->enum_default,
							 enum_options[i], ctx, 0, hooks[i].enum_check, NULL, NULL);
}

static void
define_one(int i, const WalsegGucDesc *d, bool preloaded)
{
	GucContext	ctx = pg_context(d->context, preloaded);
	const char *long_desc = long_description(d, ctx == PGC_INTERNAL);
	int			flags = unit_flags(d->unit);

	/* A value from the configuration file that a read-only setting cannot take. */
	if (ctx == PGC_INTERNAL && GetConfigOption(d->name, true, false) != NULL)
		ereport(WARNING,
				(errmsg("\"%s\" is set in the configuration, but walseg is not in shared_preload_libraries",
						d->name),
				 errhint("Settings that take effect at server start are read-only until the server loads walseg at start; add walseg to shared_preload_libraries.")));

	switch (d->type)
	{
		case WALSEG_GUC_BOOL:
			DefineCustomBoolVariable(d->name, d->description, long_desc, &bool_vars[i],
									 d->bool_default, ctx, 0, NULL, NULL, NULL);
			break;
		case WALSEG_GUC_INT:
			if (d->int_min < INT_MIN || d->int_max > INT_MAX)
				elog(ERROR, "walseg setting \"%s\" does not fit a PostgreSQL integer", d->name);
			DefineCustomIntVariable(d->name, d->description, long_desc, &int_vars[i],
									(int) d->int_default, (int) d->int_min, (int) d->int_max,
									ctx, flags, d->has_check ? hooks[i].int_check : NULL,
									NULL, NULL);
			break;
		case WALSEG_GUC_REAL:
			DefineCustomRealVariable(d->name, d->description, long_desc, &real_vars[i],
									 d->real_default, d->real_min, d->real_max, ctx, flags,
									 NULL, NULL, NULL);
			break;
		case WALSEG_GUC_STRING:
			DefineCustomStringVariable(d->name, d->description, long_desc, &string_vars[i],
									   d->string_default, ctx, 0,
									   d->has_check ? hooks[i].string_check : NULL, NULL, NULL);
			break;
		case WALSEG_GUC_ENUM:
			define_enum(i, d, long_desc, ctx);
			break;
	}
}

/* The table index of a setting the C side reads; it must be one PostgreSQL registers. */
static int
index_of(WalsegSettingId id)
{
	int			i = walseg_guc_index(id);

	if (i < 0 || i >= nsettings)
		elog(ERROR, "the walseg settings table has no setting %d", (int) id);
	if (!descs[i].in_postgres)
		elog(ERROR, "walseg setting \"%s\" is read inside PostgreSQL but not registered there",
			 descs[i].name);
	return i;
}

/*
 * Defines the walseg settings PostgreSQL uses. preloaded: called from shared_preload_libraries,
 * so postmaster-context settings can be real PGC_POSTMASTER settings.
 */
void
walseg_define_gucs(bool preloaded)
{
	nsettings = walseg_guc_count();
	if (nsettings > WALSEG_MAX_GUCS)
		elog(ERROR, "walseg has %d settings, the extension has room for %d",
			 nsettings, WALSEG_MAX_GUCS);
	for (int i = 0; i < nsettings; i++)
		if (!walseg_guc_describe(i, &descs[i]))
			elog(ERROR, "could not read walseg setting %d", i);
	/* Indices first: the init_method check hook may run while it is being defined. */
	idx_prealloc_segments = index_of(WALSEG_SETTING_PREALLOC_SEGMENTS);
	idx_init_method = index_of(WALSEG_SETTING_INIT_METHOD);
	idx_fallocate_fallback = index_of(WALSEG_SETTING_FALLOCATE_FALLBACK);
	idx_fill_io_class = index_of(WALSEG_SETTING_FILL_IO_CLASS);
	for (int i = 0; i < nsettings; i++)
		if (descs[i].in_postgres)
			define_one(i, &descs[i], preloaded);
	MarkGUCPrefixReserved("walseg");
}

/* The table entry named `name` (case-insensitive, as GUC names are), or NULL. */
const WalsegGucDesc *
walseg_guc_find(const char *name)
{
	for (int i = 0; i < nsettings; i++)
		if (pg_strcasecmp(descs[i].name, name) == 0)
			return &descs[i];
	return NULL;
}

int
walseg_guc_prealloc_segments(void)
{
	return int_vars[idx_prealloc_segments];
}

int
walseg_guc_prealloc_segments_max(void)
{
	return (int) descs[idx_prealloc_segments].int_max;
}

int
walseg_guc_init_method(void)
{
	return int_vars[idx_init_method];
}

int
walseg_guc_fallocate_fallback(void)
{
	return int_vars[idx_fallocate_fallback];
}

int
walseg_guc_fill_io_class(void)
{
	return int_vars[idx_fill_io_class];
}
