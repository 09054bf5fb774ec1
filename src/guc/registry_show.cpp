// SHOW and SHOW ALL for the Registry (include/walseg/guc_registry.h): a value as SHOW prints
// it, and a pg_settings-like row per setting.
#include <fmt/format.h>

#include "walseg/guc_registry.h"

namespace walseg::guc {

namespace {

std::string_view enum_option_name(const EnumSpec& spec, std::int64_t value) {
  for (const auto& o : spec.options)
    if (o.value == value) return o.name;
  return "?";
}

// pg_settings.setting: the stored value in the base unit, without the unit.
std::string raw_setting(const SettingDef& def, const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    if (const auto* e = std::get_if<EnumSpec>(&def.spec)) return std::string(enum_option_name(*e, *i));
    return fmt::format("{}", *i);
  }
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{:g}", *d);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "on" : "off";
  return std::get<std::string>(v);
}

void fill_spec_columns(const SettingDef& def, ShowRow& row) {
  if (std::holds_alternative<BoolSpec>(def.spec)) {
    row.vartype = "bool";
  } else if (const auto* i = std::get_if<IntSpec>(&def.spec)) {
    row.vartype = "integer";
    row.unit = unit_name(i->unit);
    row.min_val = fmt::format("{}", i->min);
    row.max_val = fmt::format("{}", i->max);
  } else if (const auto* r = std::get_if<RealSpec>(&def.spec)) {
    row.vartype = "real";
    row.unit = unit_name(r->unit);
    row.min_val = fmt::format("{:g}", r->min);
    row.max_val = fmt::format("{:g}", r->max);
  } else if (std::holds_alternative<StringSpec>(def.spec)) {
    row.vartype = "string";
  } else {
    row.vartype = "enum";
    for (const auto& o : std::get<EnumSpec>(def.spec).options) row.enum_values.emplace_back(o.name);
  }
}

}  // namespace

std::string display_value(const SettingDef& def, const Value& value) {
  if (const auto* i = std::get_if<IntSpec>(&def.spec))
    return format_int(std::get<std::int64_t>(value), i->unit);
  if (const auto* r = std::get_if<RealSpec>(&def.spec))
    return format_real(std::get<double>(value), r->unit);
  return raw_setting(def, value);
}

std::optional<ShowRow> Registry::show(std::string_view name) const {
  const State* st = state(name);
  if (st == nullptr) return std::nullopt;
  const SettingDef& def = *st->def;
  const Slot& slot = st->effective();
  ShowRow row;
  row.name = std::string(def.name);
  row.value = display_value(def, slot.value);
  row.setting = raw_setting(def, slot.value);
  row.source = std::string(source_name(source_of(def.name)));
  row.sourcefile = slot.origin.file;
  row.sourceline = slot.origin.line;
  row.context = std::string(context_name(def.context));
  row.description = std::string(def.description);
  fill_spec_columns(def, row);
  return row;
}

std::vector<ShowRow> Registry::show_all() const {
  std::vector<ShowRow> rows;
  for (const auto& st : states_) rows.push_back(*show(st.def->name));
  return rows;
}

}  // namespace walseg::guc
