"""schemathesis hooks for scripts/schemathesis.sh: what a real client does that random data cannot.

- Idempotency-Key: a client sends a fresh key per request and the same key only for a retry of
  the same request. Generated keys repeat (schemathesis reuses small strings such as "0"), and the
  server rightly refuses a key reused for a different request (422). A valid generated key is
  replaced by a fresh UUID; an invalid one is left as generated, so refusals are still checked.
- format rrule: openapi.yaml says `recurrence_rule` is an RFC 5545 RRULE (`format: rrule`), a
  grammar no JSON Schema keyword states; schemathesis learns it here, as it knows `date-time`.
- format entity-tags: `If-Match` is RFC 9110's list of entity tags (`format: entity-tags`, and a
  pattern); schemathesis learns the grammar here too (its coverage phase otherwise sent "0", a
  value the pattern itself refuses, as a valid header).

Every other hook below does what a client does for a rule openapi.yaml writes in words
(docs/api.md, "Rules the schema cannot state"), and only to cases generated as valid:
- Splits and payers must add up (addExpense, updateExpense, chargeAttendees, createRecurringCharge):
  percentages to 100% (10000 basis points), exact amounts, items with tax and tip, and payers to
  the amount, an item's split to the item's amount; a payer is named once; `paid_by` given with
  `payers` is one of them. Valid cases get their basis points
  scaled, their amount set to the sum, or their last payer given the remainder, as a client
  computing a split does; invalid ones are left alone.
- A settlement (recordSettlement) is between two people, carries a rate only to convert into
  another currency, and converts to an amount that exists: a valid case naming one person twice
  gets the other demo member, one with a rate but the same currency twice drops the rate, and
  one whose amount converts at its rate to less than 1 minor unit or more than the largest gets
  the nearest amount that converts (or, if none does, no rate); every other case goes as drawn.
- An exchange rate (setExchangeRate) is between two currencies: a valid case with the same code
  twice gets another quote.
- Payment handles (putPaymentHandles): an IBAN's check digits and length, and a Czech account's
  checksums, are checked by the app as the user types; a valid case gets a real account instead.
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
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal, localcontext
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


@st.composite
def entity_tags(draw):
    """RFC 9110's If-Match: `*`, or entity tags (commas and all visible ASCII but the quote inside)."""
    if draw(st.integers(0, 9)) == 0:
        return "*"
    etagc = st.text(alphabet=[chr(c) for c in range(0x21, 0x7F) if c != 0x22], max_size=24)
    tags = [("W/" if draw(st.booleans()) else "") + '"' + draw(etagc) + '"' for _ in range(draw(st.integers(1, 3)))]
    spaces = st.text(alphabet=" \t", max_size=2)
    return "".join(tag if i == 0 else draw(spaces) + "," + draw(spaces) + tag for i, tag in enumerate(tags))


schemathesis.openapi.format("entity-tags", entity_tags())

LARGEST = 2147483647
DEMO_MEMBERS = ["00000000-0000-4000-8000-00000000a0a0", "00000000-0000-4000-8000-00000000b0b0"]


def _as_int(value):
    """A JSON integer (JSON Schema's integers include 12.0), else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == int(value):
        return int(value)
    return None


def _positive_ints(values):
    return all(_as_int(v) is not None and v >= 1 for v in values)


def _sum_items(body):
    split = body.get("split") if isinstance(body, dict) else None
    if not isinstance(split, dict) or split.get("method") != "items" or not isinstance(split.get("items"), list):
        return
    items = split["items"]
    amounts = [item.get("amount") for item in items if isinstance(item, dict)]
    extras = [split.get(key, 0) for key in ("tax", "tip")]
    if len(amounts) != len(items) or not amounts or not _positive_ints(amounts):
        return
    if not all(_as_int(v) is not None and v >= 0 for v in extras):
        return
    total = int(sum(amounts) + sum(extras))
    if total > LARGEST:
        # No expense is that large: a client's items add up to an amount that can be (each item
        # keeps its own split, which adds up to it).
        split["tax"] = split["tip"] = 0
        while len(items) > 1 and sum(int(item["amount"]) for item in items) > LARGEST:
            items.pop()
        total = int(sum(item["amount"] for item in items))
    if 1 <= total <= LARGEST:
        body["amount"] = total


def _sum_payers(body):
    payers = body.get("payers") if isinstance(body, dict) else None
    if not isinstance(payers, list) or not payers or not all(isinstance(p, dict) for p in payers):
        return
    # Each payer once, as a client lists them.
    seen = set()
    payers[:] = [p for p in payers if not (p.get("user_id") in seen or seen.add(p.get("user_id")))]
    amounts = [p.get("amount") for p in payers]
    if not _positive_ints(amounts):
        return
    total = _as_int(body.get("amount"))
    if total is None or not 1 <= total <= LARGEST:
        total = int(sum(amounts))
        if total > LARGEST:
            total = LARGEST
        body["amount"] = total
    # The last payer pays what the others leave; or the first pays it all.
    rest = total - int(sum(amounts[:-1]))
    if len(payers) > 1 and rest >= 1:
        payers[-1]["amount"] = rest
    else:
        del payers[1:]
        payers[0]["amount"] = total
    ids = [p.get("user_id") for p in payers]
    if "paid_by" in body and body["paid_by"] not in ids and isinstance(ids[0], str):
        body["paid_by"] = ids[0]


def _settlement_parties(case):
    body = case.body
    if case.method.upper() != "POST" or not case.path.endswith("/settlements") or not isinstance(body, dict):
        return
    if body.get("from_user_id") is not None and body.get("from_user_id") == body.get("to_user_id"):
        body["to_user_id"] = DEMO_MEMBERS[1] if body["from_user_id"] == DEMO_MEMBERS[0] else DEMO_MEMBERS[0]
    if "rate" in body and body.get("settles_currency") == body.get("currency", "USD"):
        del body["rate"]
    # The amount converted at the rate is 1 to 2147483647 minor units of the debt's currency: a
    # client converts as the server does (orbit.convert: amount × rate × 10^(decimals of the debt's
    # currency − decimals of the paid one), rounded half away from zero) and, when the result does
    # not exist, asks for an amount that converts: the least that makes 1 minor unit, or the most
    # that stays within the largest. Every amount that converts (5000 at 0.9) goes as drawn.
    amount = _as_int(body.get("amount"))
    try:
        rate = Decimal(str(body.get("rate")))
    except (ArithmeticError, ValueError):
        return
    if amount is None or amount < 1 or not rate.is_finite() or rate <= 0:
        return
    with localcontext(Context(prec=80)):  # exact: 10 digits of amount times 24 of rate and 4 of scale
        _convert_within_bounds(body, amount, rate)


def _convert_within_bounds(body, amount, rate):
    scale = Decimal(10) ** (_decimals(body.get("settles_currency")) - _decimals(body.get("currency", "USD")))
    per_unit = rate * scale
    if _converted(amount, per_unit) < 1:
        least = int((Decimal("0.5") / per_unit).to_integral_value(rounding=ROUND_CEILING))
        if least <= LARGEST and 1 <= _converted(least, per_unit) <= LARGEST:
            body["amount"] = least
        else:
            del body["rate"]
    elif _converted(amount, per_unit) > LARGEST:
        most = int((Decimal(LARGEST) / per_unit).to_integral_value(rounding=ROUND_FLOOR))
        if most >= 1 and 1 <= _converted(most, per_unit) <= LARGEST:
            body["amount"] = most
        else:
            del body["rate"]


# Decimals of ISO 4217 currencies other than 2, as orbit.currency_exponent (migrations/0026) has them.
DECIMALS = {
    **dict.fromkeys(["BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF"], 0),
    **dict.fromkeys(["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"], 3),
    **dict.fromkeys(["CLF", "UYW"], 4),
}


def _decimals(code):
    return DECIMALS.get(code, 2) if isinstance(code, str) else 2


def _converted(amount, per_unit):
    return int((amount * per_unit).to_integral_value(rounding=ROUND_HALF_UP))


def _rate_currencies(case):
    body = case.body
    if case.method.upper() != "POST" or not case.path.endswith("/exchange-rates") or not isinstance(body, dict):
        return
    if body.get("base") is not None and body.get("base") == body.get("quote"):
        body["quote"] = "USD" if body["base"] != "USD" else "EUR"


def _sum_splits(body):
    """An exact split's amounts are the amount; a percent split's basis points add up to 10000.
    `body` is the expense (or recurring charge), or one item of an itemised split: each item's
    own split is made to add up to the item's amount, as the expense's to the expense's."""
    split = body.get("split") if isinstance(body, dict) else None
    if not isinstance(split, dict):
        return
    if split.get("method") == "items" and isinstance(split.get("items"), list):
        for item in split["items"]:
            _sum_splits(item)
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


def _one_key_per_member(case):
    """POST /communities/{id}/keys records one wrapped key per member (docs/e2e.md): a client
    wraps the community key once for each member, so a drawn list naming a member twice keeps
    the first."""
    body = case.body
    if not (case.method.upper() == "POST" and case.path.endswith("/keys") and isinstance(body, dict)):
        return
    keys = body.get("keys")
    if not isinstance(keys, list):
        return
    seen, kept = set(), []
    for key in keys:
        member = key.get("user_id") if isinstance(key, dict) else None
        if member in seen:
            continue
        seen.add(member)
        kept.append(key)
    body["keys"] = kept


def _valid_bank_numbers(case):
    """PUT /users/me/payment-handles (putPaymentHandles): an IBAN's check digits (mod 97) and its
    country's length, and a Czech account's weighted checksums, are rules the schema cannot state.
    A client checks them as the user types; a valid case gets a real account of the same kind."""
    body = case.body
    if not (case.method.upper() == "PUT" and case.path == "/users/me/payment-handles" and isinstance(body, dict)):
        return
    account = body.get("iban")
    if isinstance(account, dict) and isinstance(account.get("iban"), str):
        account["iban"] = "DE89 3704 0044 0532 0130 00"
    if isinstance(body.get("czech_account"), str):
        body["czech_account"] = "19-2000145399/0800"


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
    _sum_items(case.body)
    _sum_payers(case.body)
    _settlement_parties(case)
    _rate_currencies(case)
    _order_event_times(case.body)
    _one_key_per_member(case)
    _valid_bank_numbers(case)
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
