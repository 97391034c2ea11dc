#!/usr/bin/env python3
"""Regenerates Tests/OrbitCoreTests/Fixtures/recurrence.json with python-dateutil's rrule.

The Swift recurrence engine is tested against these answers: an implementation written
independently of ours. Each case is a rule, a local start (wall-clock time in a zone) and how
many occurrences to take; dateutil expands the rule on zone-aware datetimes (wall-clock
arithmetic, as RFC 5545 asks) and the result is written as UTC RFC 3339 strings. A local time in
a DST gap or overlap resolves with fold=0: the offset before the gap, the first of two repeated
times (RFC 5545 section 3.3.5).

    pip install python-dateutil==2.9.0.post0 && python3 scripts/recurrence-fixtures.py
"""
import json
import os
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

NY = "America/New_York"
BERLIN = "Europe/Berlin"

# (rule, local start, zone, how many occurrences at most)
CASES = [
    # RFC 5545, section 3.8.5.3 examples (start 1997-09-02 09:00 New York unless said).
    ("FREQ=DAILY;COUNT=10", "1997-09-02T09:00", NY, 50),
    ("FREQ=DAILY;UNTIL=19971224T000000Z", "1997-09-02T09:00", NY, 200),
    ("FREQ=DAILY;INTERVAL=2", "1997-09-02T09:00", NY, 30),
    ("FREQ=DAILY;INTERVAL=10;COUNT=5", "1997-09-02T09:00", NY, 50),
    ("FREQ=YEARLY;UNTIL=20000131T140000Z;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA", "1998-01-01T09:00", NY, 200),
    ("FREQ=DAILY;UNTIL=20000131T140000Z;BYMONTH=1", "1998-01-01T09:00", NY, 200),
    ("FREQ=WEEKLY;COUNT=10", "1997-09-02T09:00", NY, 50),
    ("FREQ=WEEKLY;UNTIL=19971224T000000Z", "1997-09-02T09:00", NY, 50),
    ("FREQ=WEEKLY;INTERVAL=2;WKST=SU", "1997-09-02T09:00", NY, 20),
    ("FREQ=WEEKLY;UNTIL=19971007T000000Z;WKST=SU;BYDAY=TU,TH", "1997-09-02T09:00", NY, 50),
    ("FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH", "1997-09-02T09:00", NY, 50),
    ("FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000Z;WKST=SU;BYDAY=MO,WE,FR", "1997-09-01T09:00", NY, 100),
    ("FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH", "1997-09-02T09:00", NY, 50),
    ("FREQ=MONTHLY;COUNT=10;BYDAY=1FR", "1997-09-05T09:00", NY, 50),
    ("FREQ=MONTHLY;UNTIL=19971224T000000Z;BYDAY=1FR", "1997-09-05T09:00", NY, 50),
    ("FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU", "1997-09-07T09:00", NY, 50),
    ("FREQ=MONTHLY;COUNT=6;BYDAY=-2MO", "1997-09-22T09:00", NY, 50),
    ("FREQ=MONTHLY;BYMONTHDAY=-3", "1997-09-28T09:00", NY, 20),
    ("FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15", "1997-09-02T09:00", NY, 50),
    ("FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1", "1997-09-30T09:00", NY, 50),
    ("FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15", "1997-09-10T09:00", NY, 50),
    ("FREQ=MONTHLY;INTERVAL=2;BYDAY=TU", "1997-09-02T09:00", NY, 30),
    ("FREQ=YEARLY;COUNT=10;BYMONTH=6,7", "1997-06-10T09:00", NY, 50),
    ("FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3", "1997-03-10T09:00", NY, 50),
    ("FREQ=YEARLY;BYDAY=20MO", "1997-05-19T09:00", NY, 5),
    ("FREQ=YEARLY;BYMONTH=3;BYDAY=TH", "1997-03-13T09:00", NY, 20),
    ("FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8", "1997-06-05T09:00", NY, 30),
    ("FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13", "1997-09-02T09:00", NY, 6),
    ("FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13", "1997-09-13T09:00", NY, 12),
    ("FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8", "1996-11-05T09:00", NY, 5),
    ("FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3", "1997-09-04T09:00", NY, 50),
    ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2", "1997-09-29T09:00", NY, 12),
    ("FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5", "2007-01-15T09:00", NY, 50),
    ("FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO", "1997-08-05T09:00", NY, 50),
    ("FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU", "1997-08-05T09:00", NY, 50),
    # A 6 pm practice stays at 6 pm local across DST changes, in both zones.
    ("FREQ=WEEKLY;BYDAY=TU", "2026-02-24T18:00", NY, 12),
    ("FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20261115T000000Z", "2026-10-01T18:00", NY, 50),
    ("FREQ=WEEKLY;BYDAY=TU", "2026-03-10T18:00", BERLIN, 6),
    ("FREQ=WEEKLY;BYDAY=SU", "2026-10-11T18:30", BERLIN, 5),
    # Times inside the spring-forward gap and the fall-back overlap.
    ("FREQ=DAILY;COUNT=4", "2026-03-06T02:30", NY, 50),
    ("FREQ=DAILY;COUNT=4", "2026-10-30T01:30", NY, 50),
    ("FREQ=DAILY;COUNT=4", "2026-03-27T02:30", BERLIN, 50),
    ("FREQ=DAILY;COUNT=4", "2026-10-23T02:30", BERLIN, 50),
    # Month ends and leap years.
    ("FREQ=MONTHLY;BYMONTHDAY=31;COUNT=8", "2026-01-31T19:00", NY, 50),
    ("FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=14", "2026-01-31T19:00", BERLIN, 50),
    ("FREQ=MONTHLY;COUNT=6", "2026-01-31T19:00", NY, 50),
    ("FREQ=YEARLY;COUNT=3", "2024-02-29T10:00", NY, 50),
    ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1;COUNT=6", "2024-02-29T10:00", BERLIN, 50),
    ("FREQ=MONTHLY;BYDAY=-1FR;COUNT=13", "2026-01-30T17:00", NY, 50),
    ("FREQ=MONTHLY;BYDAY=2MO", "2026-01-12T19:00", BERLIN, 14),
    ("FREQ=YEARLY;BYMONTH=11;BYDAY=4TH;COUNT=5", "2026-11-26T12:00", NY, 50),
    # COUNT and UNTIL describing the same series.
    ("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=9", "2026-03-02T07:15", NY, 50),
    ("FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260330T111500Z", "2026-03-02T07:15", NY, 50),
    # BYSETPOS on a weekly set, WKST variants, INTERVAL on yearly.
    ("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=6", "2026-04-01T09:00", BERLIN, 50),
    ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1,-1;COUNT=8", "2026-04-01T09:00", NY, 50),
    ("FREQ=YEARLY;INTERVAL=2;BYMONTH=7;BYDAY=1SA;COUNT=4", "2026-07-04T10:00", NY, 50),
    ("FREQ=DAILY;INTERVAL=3;BYDAY=SA,SU;COUNT=6", "2026-05-01T08:00", BERLIN, 50),
    ("FREQ=DAILY;BYMONTHDAY=1,15;BYMONTH=1,7;COUNT=6", "2026-01-01T08:00", NY, 50),
]


def expand(rule, start, zone, limit):
    local = datetime.fromisoformat(start).replace(tzinfo=ZoneInfo(zone))
    occurrences = []
    for occurrence in rrulestr(rule, dtstart=local):
        occurrences.append(occurrence.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
        if len(occurrences) >= limit:
            break
    return occurrences


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "Tests", "OrbitCoreTests", "Fixtures", "recurrence.json")
    cases = [
        {"rule": rule, "start": start, "zone": zone, "limit": limit, "expected": expand(rule, start, zone, limit)}
        for rule, start, zone, limit in CASES
    ]
    with open(path, "w") as file:
        json.dump({"generator": "python-dateutil 2.9.0.post0 rrulestr", "cases": cases}, file, indent=1)
        file.write("\n")
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
