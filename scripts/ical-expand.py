#!/usr/bin/env python3
"""Reads a calendar feed the way a phone's calendar does, with real iCalendar libraries.

Used by the calendar feed tests (Tests/OrbitAPITests/CalendarFeedTests.swift): a library written
independently of ours parses the feed (icalendar) and expands its series, overrides and
cancellations (recurring_ical_events), and each VTIMEZONE is turned into a time zone of its own
and compared with the system's zone of that name, hour by hour.

    python3 scripts/ical-expand.py FEED.ics FROM TO [ZONE_YEARS]
    python3 scripts/ical-expand.py --check-versions    (exits 1 unless the pinned versions)
        FROM, TO: UTC instants (2026-10-01T00:00:00Z); ZONE_YEARS: how many years after TO the
        VTIMEZONEs are checked (default 1). Prints JSON:
        {"occurrences": [{"uid", "start", "end", "recurrence_id", "summary", "rsvp", "url"}…],
         "timezones": {"TZID": "ok" or the first instant whose offset differs}}

scripts/ensure-deps.sh installs the libraries into .build/ical-python (pinned below).
"""
import json
import sys
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events

PINNED = {"icalendar": "7.3.2", "recurring_ical_events": "3.8.2"}


def parse_instant(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def utc(value):
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"floating time {value}: the feed must give every time a zone")
        return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(value)


def check_timezones(calendar, start, end, years_after=1):
    """Each VTIMEZONE as its own tzinfo against zoneinfo's zone, hourly over [start - 1y, end + years_after]."""
    results = {}
    for component in calendar.walk("VTIMEZONE"):
        tzid = str(component["TZID"])
        own = component.to_tz(lookup_tzid=False)
        system = ZoneInfo(tzid)
        instant = start - timedelta(days=366)
        verdict = "ok"
        while instant < end + timedelta(days=366 * years_after):
            if instant.astimezone(own).utcoffset() != instant.astimezone(system).utcoffset():
                verdict = utc(instant)
                break
            instant += timedelta(hours=1)
        results[tzid] = verdict
    return results


def check_pinned():
    """Stops, naming the difference, unless the libraries are the pinned versions: another
    version reads feeds differently, and the tests would judge ours by it."""
    from importlib.metadata import PackageNotFoundError, version

    wrong = []
    for name, pinned in PINNED.items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            try:
                installed = version(name.replace("_", "-"))
            except PackageNotFoundError:
                installed = None
        if installed != pinned:
            wrong.append(f"{name} {installed or 'missing'} (pinned {pinned})")
    if wrong:
        sys.exit("ical-expand.py: not the pinned libraries: " + ", ".join(wrong)
                 + "; remove .build/ical-python and run scripts/ensure-deps.sh")


def main():
    check_pinned()
    if sys.argv[1:] == ["--check-versions"]:
        return
    path, start, end = sys.argv[1], parse_instant(sys.argv[2]), parse_instant(sys.argv[3])
    years_after = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    with open(path, "rb") as feed:
        calendar = icalendar.Calendar.from_ical(feed.read())
    occurrences = []
    for event in recurring_ical_events.of(calendar).between(start, end):
        recurrence_id = event.get("RECURRENCE-ID")
        occurrences.append({
            "uid": str(event["UID"]),
            "start": utc(event["DTSTART"].dt),
            "end": utc(event["DTEND"].dt) if "DTEND" in event else None,
            "recurrence_id": utc(recurrence_id.dt) if recurrence_id is not None else None,
            "summary": str(event["SUMMARY"]),
            "rsvp": str(event["X-ORBIT-RSVP"]) if "X-ORBIT-RSVP" in event else None,
            "url": str(event["URL"]) if "URL" in event else None,
        })
    occurrences.sort(key=lambda o: (o["start"], o["uid"]))
    json.dump({"occurrences": occurrences, "timezones": check_timezones(calendar, start, end, years_after)}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
