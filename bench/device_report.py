"""The device sections of the fs matrix report (fs_report.py): device bytes, write amplification,
flushes and jbd2 commits per commit, what preallocation costs or saves per filesystem, the
answer to MDEV-14425's hypothesis, and the FUSE no-fallocate run.

A figure is null in the JSON where it was not measurable (the row's note says why) and "-" here;
a row whose device saw other I/O meanwhile (device_other_io) is marked "*".
"""

PREALLOCATED = ("zero_write", "posix_fallocate", "glibc_emulation")  # size set before the commits
APPEND = "none"  # the file grows with every commit
JOURNALED = ("ext4", "ext4-journal", "xfs", "ext4-noextents")

FIELDS = [("device_bytes_per_commit", "device bytes per commit", "{:.0f}"),
          ("write_amplification", "write amplification (device bytes / bytes committed)", "{:.2f}"),
          ("device_flushes_per_commit", "device flush requests per commit", "{:.2f}"),
          ("journal_commits_per_commit", "jbd2 journal commits per commit", "{:.2f}")]


def rows(doc, phase):
    return [r for r in doc["rows"] if r["phase"] == phase]


def measured(doc):
    return any(r.get("device_bytes_per_commit") is not None for r in doc["rows"])


def find(doc, phase, method, io="pwrite"):
    m = [r for r in rows(doc, phase) if r["method"] == method and r.get("io", "pwrite") == io]
    return m[0] if m else None


def cell(r, field, fmt):
    if r is None or r.get(field) is None:
        return "-"
    return fmt.format(r[field]) + ("*" if r.get("device_other_io") else "")


def table(docs, phase, field, label, fmt):
    names = [n for n, d in docs.items() if rows(d, phase)]
    if not names:
        return []
    keys = []
    for n in names:
        for r in rows(docs[n], phase):
            k = (r["method"], r.get("io", "pwrite"))
            if k not in keys:
                keys.append(k)
    out = ["", f"### {phase}: {label}", "", "| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for method, io in keys:
        label_k = method if phase == "write" else f"{method} ({io})"
        out.append(f"| {label_k} | " + " | ".join(cell(find(docs[n], phase, method, io), field, fmt) for n in names) + " |")
    return out


def emulation(doc):
    """What glibc's emulation costs to create a segment, against posix_fallocate (create phase)."""
    e, p = find(doc, "create", "glibc_emulation"), find(doc, "create", "posix_fallocate")
    if not e or not p:
        return ""
    used = f", which ran as {p['method_used']}" if p["method_used"] not in ("", p["method"]) else ""
    return (f"; the emulation makes a segment in {e['median_us']:.0f} us against posix_fallocate's "
            f"{p['median_us']:.0f} us{used}")


def prealloc_line(name, doc):
    """One line: the cheapest preallocated method against appending, in bytes and latency."""
    app = find(doc, "write", APPEND)
    pre = [r for r in (find(doc, "write", m) for m in PREALLOCATED) if r]
    if not app or not pre:
        return f"- **{name}**: no write-phase rows for both appending and a preallocated method"
    if app.get("device_bytes_per_commit") is None:
        best = min(pre, key=lambda r: r["median_us"])
        return (f"- **{name}**: bytes not measurable ({app.get('note') or 'no device'}); latency: "
                f"{best['method']} {best['median_us']:.0f} us median per commit vs {app['median_us']:.0f} appending"
                f"{emulation(doc)}")
    best = min(pre, key=lambda r: (r["device_bytes_per_commit"], r["median_us"]))
    db = app["device_bytes_per_commit"] - best["device_bytes_per_commit"]
    dl = app["median_us"] - best["median_us"]
    used = f", really {best['method_used']}" if best["method_used"] not in ("", best["method"]) else ""
    mark = " (other I/O seen: *)" if best.get("device_other_io") or app.get("device_other_io") else ""
    return (f"- **{name}**: preallocating ({best['method']}{used}) {'saves' if db >= 0 else 'costs'} "
            f"{abs(db):.0f} device bytes per commit ({best['device_bytes_per_commit']:.0f} vs "
            f"{app['device_bytes_per_commit']:.0f} appending; amplification {best['write_amplification']:.2f} vs "
            f"{app['write_amplification']:.2f}) and {'saves' if dl >= 0 else 'costs'} {abs(dl):.0f} us of median "
            f"commit latency ({best['median_us']:.0f} vs {app['median_us']:.0f} us){mark}{emulation(doc)}")


def hypothesis(docs):
    out = ["", "### MDEV-14425's hypothesis: does overwriting preallocated blocks cost a journaled filesystem more?", "",
           "Write phase, device bytes per 8 kB commit (pwrite + fdatasync); ratio = appending / overwriting.", "",
           "| filesystem | append (none) | zero_write | posix_fallocate | none / zero_write | none / posix_fallocate | answer |",
           "|---|---|---|---|---|---|---|"]
    for n in JOURNALED:
        d = docs.get(n)
        if not d or not measured(d):
            continue
        a, z, p = (find(d, "write", m) for m in (APPEND, "zero_write", "posix_fallocate"))
        if not a or not z or not p:
            continue
        bytes_of = lambda r: r["device_bytes_per_commit"]
        rz, rp = bytes_of(a) / bytes_of(z), bytes_of(a) / bytes_of(p)
        cheaper = "overwriting is cheaper" if min(bytes_of(z), bytes_of(p)) < bytes_of(a) else "appending is cheaper"
        out.append(f"| {n} | {cell(a, 'device_bytes_per_commit', '{:.0f}')} | {cell(z, 'device_bytes_per_commit', '{:.0f}')} | "
                   f"{cell(p, 'device_bytes_per_commit', '{:.0f}')} | {rz:.2f}x | {rp:.2f}x | {cheaper} |")
    return out


def fuse_section(docs):
    d = docs.get("fuse-nofallocate")
    if not d:
        return []
    out = ["", "### fuse-nofallocate: fallocate refused, as on NFS before 4.2 (MDEV-32268 without NFS)", "",
           "glibc's posix_fallocate() would emulate there (one byte per block: the glibc_emulation row); walseg's "
           "posix_fallocate and fallocate_keep_size fall back by walseg.fallocate_fallback (`used`). Device figures "
           "are the backing ext4's.", "",
           "| method | used | median us per durable creation | allocated bytes | note |", "|---|---|---|---|---|"]
    for r in rows(d, "create"):
        out.append(f"| {r['method']} | {r['method_used']} | {r['median_us']:.0f} | {r['allocated_bytes']} | {r['note']} |")
    auto = (d.get("verdict") or {}).get("auto") or {}
    out += ["", f"walseg.init_method = auto picks there: **{auto.get('method', '-')}** ({auto.get('reason', 'no probe ran')})"]
    return out


def sections(docs):
    out = ["", "## Device I/O per commit", "",
           "From the block device's counters (/sys/class/block/DEV/stat, /proc/fs/jbd2/DEV-8/info) around each "
           "commit; `-`: not measurable (the JSON's note says why); `*`: the device saw other I/O during the row."]
    for phase in ("write", "append"):
        for field, label, fmt in FIELDS:
            out += table(docs, phase, field, label, fmt)
    return out + hypothesis(docs) + fuse_section(docs)
