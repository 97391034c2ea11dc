"""Writes the schemathesis settings for scripts/schemathesis.sh from openapi.yaml.

Usage: schemathesis-config.py OPENAPI_YAML OUTPUT_TOML (run with schemathesis's own Python, which
has PyYAML).

`positive_data_acceptance` says which answers to a request generated as valid are not a refusal of
valid data. schemathesis's default takes 409 and 429 from every operation; here each operation
says for itself, from the answers openapi.yaml documents for it:
- 2xx and 3xx are acceptance; 5xx is `not_a_server_error`'s to judge, not this check's.
- 401, 403, 404: a valid request by a user who may not, or for an id that names nothing (generated
  ids mostly do), where the operation documents them.
- 409 (a valid request the state refuses, docs/api.md), 412 (a well-formed If-Match naming another
  version, RFC 9110 13.1.1), 416 (a Range past the end of a file, RFC 9110 15.5.17) and 426 (a plain
  GET on the WebSocket route): only where the operation documents them.
- 429 only where a state, not a limiter, answers it: the child sign-in's lock after wrong PINs, a
  second nudge of the same person within a day.
  The limiters are off in the fuzzed server (scripts/schemathesis.sh), so any other 429 is a fault.
An answer the operation does not document fails `status_code_conformance` anyway; this keeps an
operation that documents 409 for one rule from having any 409 taken as a refusal of valid data.

`negative_data_rejection` takes schemathesis's default refusals, and 412 where the operation
documents it: RFC 9110 13.2.1 evaluates If-Match before the content is processed, so an invalid
body naming a stale version is rightly answered 412.
"""

import sys

import yaml

ALWAYS = ["2XX", "3XX", "5XX"]
NEGATIVE = ["400", "401", "403", "404", "405", "406", "409", "415", "422", "428", "429", "5XX"]
IF_DOCUMENTED = ["401", "403", "404", "409", "412", "416", "426"]
STATE_429 = {"signInChild", "nudgeMember"}

# The payment providers' routes answer 501 not-configured on a server without their settings (as
# `orbitctl dev` is), as openapi.yaml documents: that is the answer expected there, not a fault.
NOT_CONFIGURED = {"stripeWebhook", "appStoreNotification", "appStoreToken", "startSubscriptionCheckout", "startDuesCheckout"}
# No request schemathesis makes carries Stripe's HMAC of its body: a well-formed Stripe-Signature is
# still refused (400 invalid-signature), before the server's settings are looked at, as the
# operation's description says.
SIGNATURE_REFUSED = {"stripeWebhook"}


def quoted(statuses):
    return "[" + ", ".join(f'"{status}"' for status in statuses) + "]"


def main(document_path, output_path):
    document = yaml.safe_load(open(document_path, encoding="utf-8"))
    sections = ["# Written by scripts/schemathesis-config.py from openapi.yaml; do not edit.\n"]
    for item in document["paths"].values():
        for method, operation in item.items():
            if method not in ("get", "put", "post", "patch", "delete", "head", "options") or "operationId" not in operation:
                continue
            identifier = operation["operationId"]
            documented = {str(status) for status in operation.get("responses", {})}
            accepted = ALWAYS + [status for status in IF_DOCUMENTED if status in documented]
            if identifier in STATE_429 and "429" in documented:
                accepted.append("429")
            if identifier in SIGNATURE_REFUSED:
                accepted.append("400")
            lines = ["[[operations]]", f'include-operation-id = "{identifier}"', f"checks.positive_data_acceptance.expected-statuses = {quoted(accepted)}"]
            if "412" in documented:
                lines.append(f"checks.negative_data_rejection.expected-statuses = {quoted(NEGATIVE + ['412'])}")
            if identifier in NOT_CONFIGURED:
                lines.append(f'checks.not_a_server_error.expected-statuses = {quoted(["2XX", "3XX", "4XX", "501"])}')
            sections.append("\n".join(lines) + "\n")
    with open(output_path, "w", encoding="utf-8") as output:
        output.write("\n".join(sections))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: schemathesis-config.py OPENAPI_YAML OUTPUT_TOML")
    main(sys.argv[1], sys.argv[2])
