"""schemathesis hooks for scripts/schemathesis.sh: what a real client does that random data cannot.

- Idempotency-Key: a client sends a fresh key per request and the same key only for a retry of
  the same request. Generated keys repeat (schemathesis reuses small strings such as "0"), and the
  server rightly refuses a key reused for a different request (422). A valid generated key is
  replaced by a fresh UUID; an invalid one is left as generated, so refusals are still checked.
- format rrule: openapi.yaml says `recurrence_rule` is an RFC 5545 RRULE (`format: rrule`), a
  grammar no JSON Schema keyword states; schemathesis learns it here, as it knows `date-time`.
- Splits must add up, as the document says in words (a schema cannot sum): percentages to 100%
  (10000 basis points), exact amounts to the expense's amount. Valid (positive) cases get their
  basis points scaled, or their amount set to the sum, as a client computing a split does;
  invalid ones are left alone.
- An event ends no earlier than it starts (in words in the document, too): a valid case whose
  `ends_at` comes before its `starts_at` gets the two swapped.
- Ids: half of the valid cases that name a community, post, dues or user by a drawn UUID name the
  demo data's instead (`sql/seed/demo.sql`, which `orbitctl dev` loads), so that every operation
  is reached past "404, no such community" in every phase, not only in the stateful one.
- cursor: a cursor is opaque, made by the server for one list and checked when it comes back; the
  only valid cursors are `next_cursor` values the server sent. Generated cursors are dropped unless
  they are one the server sent (the stateful phase follows `next_cursor` by the document's links).
"""
import json
import random
from datetime import datetime
import re
import uuid

import schemathesis

from hypothesis import strategies as st

VALID_KEY = re.compile(r"^[!-~]{1,255}$")

WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

# The demo data's ids (sql/seed/demo.sql): Ada's community, its poll, its dues, Max (a member).
DEMO_IDS = {
    "community_id": "00000000-0000-4000-8000-0000000c0001",
    "post_id": "00000000-0000-4000-8000-0000000f0002",
    "dues_id": "00000000-0000-4000-8000-0000000a0001",
    "user_id": "00000000-0000-4000-8000-00000000b0b0",
}
RANDOM = random.Random(1)


@st.composite
def rrules(draw):
    """RRULEs the server's engine takes: a frequency and optional parts, in any order."""
    frequency = draw(st.sampled_from(["DAILY", "WEEKLY", "MONTHLY", "YEARLY"]))
    parts = [f"FREQ={frequency}"]
    if draw(st.booleans()):
        parts.append(f"INTERVAL={draw(st.integers(1, 1000))}")
    end = draw(st.sampled_from(["none", "count", "until"]))
    if end == "count":
        parts.append(f"COUNT={draw(st.integers(1, 10000))}")
    elif end == "until":
        day = draw(st.dates())
        parts.append(f"{day.year:04d}{day.month:02d}{day.day:02d}" + ("T235959Z" if draw(st.booleans()) else ""))
        parts[-1] = "UNTIL=" + parts[-1]
    if draw(st.booleans()):
        days = draw(st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7, unique=True))
        parts.append("BYDAY=" + ",".join(days))
    if frequency in ("MONTHLY", "YEARLY") and draw(st.booleans()):
        parts.append(f"BYMONTHDAY={draw(st.sampled_from([1, 15, 28, -1]))}")
    if frequency == "YEARLY" and draw(st.booleans()):
        parts.append(f"BYMONTH={draw(st.integers(1, 12))}")
    if draw(st.booleans()):
        parts.append(f"WKST={draw(st.sampled_from(WEEKDAYS))}")
    head, rest = parts[0], draw(st.permutations(parts[1:]))
    return ";".join([head, *rest])


schemathesis.openapi.format("rrule", rrules())


def _sum_splits(body):
    split = body.get("split") if isinstance(body, dict) else None
    if not isinstance(split, dict):
        return
    amounts = split.get("amounts")
    if split.get("method") == "exact" and isinstance(amounts, dict) and amounts:
        if all(isinstance(v, (int, float)) and v == int(v) for v in amounts.values()):
            if sum(amounts.values()) > 2147483647:
                split["amounts"] = amounts = {k: 1 for k in amounts}
            total = int(sum(amounts.values()))
            if 1 <= total <= 2147483647:
                body["amount"] = total
        return
    if split.get("method") != "percent":
        return
    points = split.get("basis_points")
    # JSON Schema's integers include 1281.0.
    if not isinstance(points, dict) or not points or not all(isinstance(v, (int, float)) and v >= 1 and v == int(v) for v in points.values()):
        return
    points = {k: int(v) for k, v in points.items()}
    keys = sorted(points)
    if len(keys) > 10000:
        return
    total = sum(points[k] for k in keys)
    scaled = {k: max(1, points[k] * 10000 // total) for k in keys}
    scaled[keys[0]] += 10000 - sum(scaled.values())
    if scaled[keys[0]] >= 1:
        split["basis_points"] = scaled
SEEN_CURSORS = set()


def _order_event_times(body):
    if not isinstance(body, dict) or not isinstance(body.get("starts_at"), str) or not isinstance(body.get("ends_at"), str):
        return
    try:
        starts = datetime.fromisoformat(body["starts_at"].replace("z", "Z").replace("t", "T"))
        ends = datetime.fromisoformat(body["ends_at"].replace("z", "Z").replace("t", "T"))
    except ValueError:
        return
    if ends < starts:
        body["starts_at"], body["ends_at"] = body["ends_at"], body["starts_at"]


@schemathesis.hook
def before_call(ctx, case, kwargs):
    """Runs for every request of every phase, just before it is sent. Negative cases are left
    alone: an edit makes schemathesis revalidate the case, which would turn a deliberately
    invalid request (say, one without Authorization) into a valid one."""
    if case.meta is not None and case.meta.generation.mode.is_negative:
        return
    headers = case.headers
    if headers and "Idempotency-Key" in headers and VALID_KEY.match(str(headers["Idempotency-Key"])):
        headers["Idempotency-Key"] = str(uuid.uuid4())
    # Never the demo community's deletion: every later case would find it gone.
    # Nor in the stateful phase, where ids come from earlier responses through links.
    stateful = case.meta is not None and type(case.meta.phase.data).__name__ == "StatefulPhaseData"
    keep_demo = stateful or (case.method.upper() == "DELETE" and case.path == "/communities/{community_id}")
    for name, demo in DEMO_IDS.items():
        if not keep_demo and case.path_parameters and name in case.path_parameters and RANDOM.random() < 0.5:
            case.path_parameters[name] = demo
    _sum_splits(case.body)
    _order_event_times(case.body)
    query = case.query
    if query and "cursor" in query and query["cursor"] not in SEEN_CURSORS:
        del query["cursor"]


@schemathesis.hook
def after_call(ctx, case, response):
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return
    if isinstance(body, dict) and isinstance(body.get("next_cursor"), str):
        SEEN_CURSORS.add(body["next_cursor"])
