"""Reads a schemathesis report (results/schemathesis.txt) and says whether the run failed.

A failure (any ST… check, a 5xx, a response unlike the document) fails. So does an error, unless
every error is schemathesis's own "Runtime Error" raised inside hypothesis while it describes a
strategy (a KeyError or SystemError in hypothesis/internal/lambda_sources.py, or FlakyFailure
around one: a bug of the tool, no request to the server; docs/testing.md). Exit 0: passed."""

import re
import sys

text = open(sys.argv[1], encoding="utf-8", errors="replace").read()


def failures_section(text):
    """Each failing operation's block, cut short, to be printed last: CI keeps the output's tail."""
    section = text.split("FAILURES ====", 1)[1] if "FAILURES ====" in text else ""
    section = re.split(r"(ERRORS|SUMMARY|WARNINGS) ====", section, maxsplit=1)[0]
    out = []
    for block in re.split(r"\n(?=_{3,} .+ _{3,}\n)", section):
        lines = [line for line in block.strip(" =\n").splitlines() if line.strip()]
        out += lines[:30] + (["    …"] if len(lines) > 30 else [])
    return "\n".join(out)

summary = [line for line in text.splitlines() if re.match(r"^=+ .* in [0-9.]+s =+$", line)]
if not summary:
    print("schemathesis: no summary line in the report", file=sys.stderr)
    sys.exit(1)
last = summary[-1]
failures = int((re.search(r"(\d+) failures?", last) or [None, "0"])[1])
errors = int((re.search(r"(\d+) errors?", last) or [None, "0"])[1])
if failures:
    print("schemathesis: the failures again (replay with the seed above):", file=sys.stderr)
    print(failures_section(text), file=sys.stderr)
    print(f"schemathesis: {failures} failure(s)", file=sys.stderr)
    sys.exit(1)
if errors:
    section = text.split("ERRORS ====", 1)[1] if "ERRORS ====" in text else ""
    section = re.split(r"(FAILURES|SUMMARY|WARNINGS) ====", section, maxsplit=1)[0]
    blocks = [b for b in re.split(r"\n_{3,} .+ _{3,}\n", section) if b.strip(" =\n")]
    internal = [b for b in blocks if b.lstrip().startswith("Runtime Error") and "hypothesis/internal/lambda_sources.py" in b]
    if len(internal) == len(blocks) == errors:
        print(f"schemathesis: {errors} error(s) inside hypothesis itself (not a request to the server); not counted", file=sys.stderr)
        sys.exit(0)
    print(f"schemathesis: {errors} error(s)", file=sys.stderr)
    sys.exit(1)
sys.exit(0)
