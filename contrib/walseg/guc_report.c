/*
 * contrib/walseg/guc_report.c: what the configuration files hold for walseg's settings, said
 * where a DBA looks for it: in the preallocator's log lines.
 *
 * PostgreSQL reports an invalid value of an extension's setting only as a WARNING while the
 * postmaster loads the library, and a reload's complaints at LOG by the postmaster alone; the
 * setting then keeps its default (at start) or its previous value (at a reload). Names under
 * the reserved prefix that walseg does not register (the walseg tool's own settings, from a
 * file written for the tool and included in postgresql.conf) are refused the same way, as
 * invalid names. So the worker reads the files again as pg_file_settings does
 * (postgresql.conf with its includes, then postgresql.auto.conf; the last entry of a name
 * counts) and, for each walseg.* entry:
 *   - a registered setting whose value PostgreSQL refuses: named in the start line (or a
 *     reload's line) with the value used instead. The value is checked by set_config_option
 *     without applying it, so with PostgreSQL's own parser, check hooks and wording;
 *   - a setting only the walseg tool uses: listed once at start, with what applies inside
 *     PostgreSQL instead (the table's note);
 *   - all of them together, as the walseg tool would read them (walseg_guc_cross_check): what
 *     `walseg check-config` would refuse, at LOG and not enforced, since it concerns the tool.
 *
 * Runs in the preallocator (a background worker, outside any transaction). Everything it
 * allocates lives in a memory context of its own, deleted before it returns, except the
 * strings of the caller's WalsegRefused.
 */
#include "walseg.h"

#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#define WALSEG_PREFIX "walseg."
#define WALSEG_CROSS_CHECK_BYTES 4096

/* The walseg.* entries of the configuration files (ConfigVariable *), the last of each name. */
static List *
walseg_entries(void)
{
	ConfigVariable *head = NULL;
	ConfigVariable *tail = NULL;
	List	   *entries = NIL;

	/* PostgreSQL has reported any syntax error itself; use what parses. */
	if (ConfigFileName != NULL)
		(void) ParseConfigFile(ConfigFileName, true, NULL, 0, 0, DEBUG2, &head, &tail);
	(void) ParseConfigFile(PG_AUTOCONF_FILENAME, false, NULL, 0, 0, DEBUG2, &head, &tail);
	for (ConfigVariable *item = head; item != NULL; item = item->next)
	{
		ListCell   *lc;
		bool		replaced = false;

		if (item->name == NULL || item->value == NULL ||
			pg_strncasecmp(item->name, WALSEG_PREFIX, strlen(WALSEG_PREFIX)) != 0)
			continue;
		foreach(lc, entries)
		{
			if (pg_strcasecmp(((ConfigVariable *) lfirst(lc))->name, item->name) == 0)
			{
				lfirst(lc) = item;
				replaced = true;
				break;
			}
		}
		if (!replaced)
			entries = lappend(entries, item);
	}
	return entries;
}

/*
 * PostgreSQL's reason for refusing `value` for the registered setting `name`, or NULL if it
 * takes it. changeVal = false: parsed and checked (check hooks too), never applied; context
 * PGC_POSTMASTER: judged as at server start, so no setting is refused for its context.
 */
static char *
refusal(const char *name, const char *value)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *volatile why = NULL;

	PG_TRY();
	{
		(void) set_config_option(name, value, PGC_POSTMASTER, PGC_S_FILE, GUC_ACTION_SET,
								 false, ERROR, false);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		why = edata->detail ? psprintf("%s: %s", edata->message, edata->detail) : edata->message;
	}
	PG_END_TRY();
	return why;
}

/* Adds one refused value: its name and the value in effect instead, and where and why. */
static void
add_refused(WalsegRefused *refused, const WalsegGucDesc *d, const ConfigVariable *item,
			const char *why)
{
	const char *in_effect = GetConfigOptionByName(d->name, NULL, false);
	bool		is_default = strcmp(in_effect, d->default_text) == 0;

	appendStringInfo(&refused->names, "%s%s = '%s' (using %s%s)",
					 refused->count > 0 ? ", " : "", d->name, item->value,
					 is_default ? "the default, " : "", in_effect);
	appendStringInfo(&refused->details, "%s%s = '%s' in \"%s\" line %d: %s",
					 refused->count > 0 ? "\n" : "", d->name, item->value, item->filename,
					 item->sourceline, why);
	refused->count++;
}

/* Logs the walseg tool's settings found in the files, with what applies instead. */
static void
log_tool_only(List *entries)
{
	StringInfoData names;
	StringInfoData notes;
	ListCell   *lc;
	int			count = 0;

	initStringInfo(&names);
	initStringInfo(&notes);
	foreach(lc, entries)
	{
		ConfigVariable *item = lfirst(lc);
		const WalsegGucDesc *d = walseg_guc_find(item->name);

		if (d == NULL || d->in_postgres)
			continue;
		appendStringInfo(&names, "%s%s", count > 0 ? ", " : "", d->name);
		appendStringInfo(&notes, "%s%s in \"%s\" line %d: %s", count > 0 ? "\n" : "", d->name,
						 item->filename, item->sourceline, d->postgres_note);
		count++;
	}
	if (count > 0)
		ereport(LOG,
				(errmsg_plural("walseg: the configuration sets %d setting of the walseg tool, which PostgreSQL does not use: %s",
							   "walseg: the configuration sets %d settings of the walseg tool, which PostgreSQL does not use: %s",
							   count, count, names.data),
				 errdetail("%s", notes.data),
				 errhint("PostgreSQL reports each as an invalid parameter name under the reserved prefix \"walseg\" at start and at each reload, and ignores it; the walseg tool reads it from the same file.")));
}

/*
 * Reads the configuration files and reports on their walseg.* entries as described at the
 * top: fills *refused (its strings allocated in the caller's memory context; count 0 and
 * empty strings when nothing was refused) and logs the rest. at_start: also list the tool's
 * settings (once per worker start is enough; they cannot change meaning at a reload).
 */
void
walseg_check_config_files(bool at_start, WalsegRefused *refused)
{
	MemoryContext cxt;
	MemoryContext old;
	List	   *entries;
	ListCell   *lc;
	const char **names;
	const char **values;
	int			n = 0;
	char		out[WALSEG_CROSS_CHECK_BYTES];
	char		hints[WALSEG_CROSS_CHECK_BYTES];

	refused->count = 0;
	initStringInfo(&refused->names);
	initStringInfo(&refused->details);
	cxt = AllocSetContextCreate(CurrentMemoryContext, "walseg configuration files",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	entries = walseg_entries();
	names = palloc0(sizeof(char *) * (list_length(entries) + 1));
	values = palloc0(sizeof(char *) * (list_length(entries) + 1));
	foreach(lc, entries)
	{
		ConfigVariable *item = lfirst(lc);
		const WalsegGucDesc *d = walseg_guc_find(item->name);
		char	   *why;

		names[n] = item->name;
		values[n++] = item->value;
		if (d != NULL && d->in_postgres && (why = refusal(d->name, item->value)) != NULL)
			add_refused(refused, d, item, why);
	}
	if (at_start)
		log_tool_only(entries);
	if (walseg_guc_cross_check(names, values, n, out, sizeof(out), hints, sizeof(hints)) > 0)
		ereport(LOG,
				(errmsg("walseg settings would be rejected by the walseg tool"),
				 errdetail("%s", out),
				 hints[0] != '\0' ? errhint("%s", hints) : 0));
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
