"""Aggregate statistics of dumped records (MXNet's ``AggregateStats``) and their two
printed forms, ``profiler.dumps()``'s table and JSON, laid out as MXNet prints them.

Per category and name: a duration's count, total, min and max (microseconds); a counter's
count, last value, min and max (its "average" is MXNet's half range); a marker only names
its category. Printed values are thousandths: milliseconds, or kB for the memory
categories.
"""

from __future__ import annotations

import json

__all__ = ["Stats", "SORT_KEYS"]

DURATION, COUNTER, OTHER = 1, 2, 4
MEMORY_CATEGORIES = ("Device Storage", "Pool Memory")
SORT_KEYS = ("total", "avg", "min", "max", "count")


class Stats:
    def __init__(self):
        self.table: dict = {}           # category -> name -> [type, count, total, min, max]

    def clear(self):
        self.table.clear()

    def add(self, records):
        for r in records:
            kind, name, cat = r[:3]
            row = self.table.setdefault(cat, {}).get(name)
            if row is None:
                row = self.table[cat][name] = [OTHER, 0, 0, float("inf"), 0]
            if kind == "op" or kind == "span":
                t0, t1 = (r[3], r[4]) if kind == "op" else (r[5], r[6])
                us = (t1 - t0) / 1000
                row[0] = DURATION
                row[1] += 1
                row[2] += us
                row[3] = min(row[3], us)
                row[4] = max(row[4], us)
            elif kind == "count":
                value = r[4]
                row[0] = COUNTER
                row[1] += 1
                row[2] = value
                row[3] = min(row[3], value)
                row[4] = max(row[4], value)

    def _rows(self, rows, sort_by, ascending):
        """(name, count, total, min, max, avg) of printable rows, in MXNet's order: by the
        key, descending unless ``ascending``, ties by name descending."""
        out = []
        for name, (typ, count, total, lo, hi) in rows.items():
            if typ == OTHER:
                continue
            avg = (hi - lo) / 2 if typ == COUNTER else total / count
            key = {"total": total, "avg": avg, "min": lo, "max": hi, "count": count}[sort_by]
            out.append(((-key if ascending else key), name,
                        (name, count, total / 1000, lo / 1000, hi / 1000, avg / 1000)))
        out.sort(key=lambda x: (x[0], x[1]), reverse=True)
        return [x[2] for x in out]

    def table_text(self, sort_by="total", ascending=False) -> str:
        lines = ["", "Profile Statistics:", "\tNote the difference in units for different "
                 "entries."]
        for cat in sorted(self.table):
            mem = cat in MEMORY_CATEGORIES
            lines += [cat, "================="]
            time_head, time_rule = ("", "") if mem else (f"{'Time (ms)':>16} ",
                                                         f"{'---------':>16} ")
            unit = "Use  (kB)" if mem else "Time (ms)"
            lines.append(f"{'Name':<25}{'Total Count':>16} {time_head}{'Min ' + unit:>16} "
                         f"{'Max ' + unit:>16} {'Avg ' + unit:>16}")
            lines.append(f"{'----':<25}{'-----------':>16} {time_rule}{'-------------':>16} "
                         f"{'-------------':>16} {'-------------':>16}")
            for name, count, total, lo, hi, avg in self._rows(self.table[cat], sort_by,
                                                              ascending):
                total_col = "" if mem else f"{total:16.4f} "
                lines.append(f"{name:<25}{count:>16} {total_col}{lo:16.4f} {hi:16.4f} "
                             f"{avg:16.4f}")
            lines.append("")
        return "\n".join(lines) + "\n"

    def json_text(self, sort_by="total", ascending=False) -> str:
        sections = {False: [], True: []}
        for cat in sorted(self.table):
            mem = cat in MEMORY_CATEGORIES
            entries = []
            for name, count, total, lo, hi, avg in self._rows(self.table[cat], sort_by,
                                                              ascending):
                fields = [f'"Count": {count}'] + ([] if mem else [f'"Total": {total:.4g}'])
                fields += [f'"Min": {lo:.4g}', f'"Max": {hi:.4g}', f'"Avg": {avg:.4g}']
                body = ",\n".join(" " * 16 + f for f in fields)
                entries.append(f'            {json.dumps(name)}: {{\n{body}\n            }}\n')
            sections[mem].append(f'        {json.dumps(cat)}: {{\n'
                                 + "            ,\n".join(entries) + "        }\n")
        time_part = "        ,\n".join(sections[False])
        memory_part = "        ,\n".join(sections[True])
        return ('{\n    "Time": {\n' + time_part + '    }\n    ,\n    "Memory": {\n'
                + memory_part + '    }\n,\n    "Unit": {\n        "Time": "ms",\n'
                '        "Memory": "kB"\n    }\n}\n')
