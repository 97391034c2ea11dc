#!/usr/bin/env bash
# A team's season of money through orbitctl (docs/money.md), printing each command and what it
# answered: monthly dues (recurring, with a skipped month and the job catching up), an away game charged to who came (plus-ones, a child to their parent) and its match fee as dues per head, a
# itemised dinner paid by two with a tip, a settled share, money's history and the export. Needs a migrated
# database (DATABASE_URL, or run `orbitctl dev` first and export the URL it prints) and jq.
#
#   swift build --product orbitctl && DATABASE_URL=... bash scripts/money-season.sh
set -euo pipefail
cd "$(dirname "$0")/.."
orbitctl=${ORBITCTL:-.build/debug/orbitctl}
suffix=$(date +%s%N | tail -c 7)

run() {
    printf '\n$ orbitctl %s\n' "$*" >&2
    "$orbitctl" "$@"
}
id_of() {
    local answer
    answer=$(run "$@")
    printf '%s\n' "$answer" | jq -c '{id} + (if .splits then {paid_by, payers, splits: [.splits[] | {user_id, for, amount}]} else {} end)' >&2
    jq -r .id <<<"$answer"
}

coach=$(id_of user create --email "coach-$suffix@tigers.example" --name Coach --json)
ana=$(id_of user create --email "ana-$suffix@tigers.example" --name Ana --json)
ben=$(id_of user create --email "ben-$suffix@tigers.example" --name Ben --json)
team=$(id_of community create --name "Tigers U10" --settings '{"timezone": "Europe/Berlin"}' --as "$coach" --json)
run community add-member "$team" --user "$ana" --as "$coach" >/dev/null
run community add-member "$team" --user "$ben" --as "$coach" >/dev/null
tim=$(id_of family add --name Tim --as "$ana" --json)

# Monthly dues on the 1st since September: the months already due are created at once.
monthly=$(id_of recurring add --community "$team" --kind dues --description "Monthly dues" --amount 40.00 --currency EUR \
    --rule "FREQ=MONTHLY;BYMONTHDAY=1" --starts 2026-09-01 --as "$coach" --json)
run dues list --community "$team" --as "$ben"
dues=$(run dues list --community "$team" --as "$ben" --json | jq -r '[.items[] | select(.recurring_charge_id != null)] | max_by(.due_date) | .id')
run dues pay "$dues" --user "$ben" --amount 40.00 --method transfer --as "$coach" >/dev/null
# No dues over the holidays: December is skipped.
run recurring skip "$monthly" --date 2026-12-01 --as "$coach"

# An away game: Coach brings a plus-one, Ana comes with Tim, Ben cannot.
game=$(id_of event create --community "$team" --title "Away game" --starts-at 2026-11-28T10:00:00+01:00 --category game --as "$coach" --json)
run event rsvp "$game" --status yes --plus-ones 1 --as "$coach" >/dev/null
run event rsvp "$game" --status yes --as "$ana" >/dev/null
run event rsvp "$game" --status yes --family-member "$tim" --as "$ana" >/dev/null
run event rsvp "$game" --status no --as "$ben" >/dev/null
bus=$(id_of expense add --from-event "$game" --amount 120.00 --currency EUR --as "$coach" --json)
# The league's match fee: dues per head for who came (Coach 2 heads, Ana 2 with Tim), not Ben.
matchfee=$(id_of dues create --from-event "$game" --name "Match fee" --amount 5.00 --currency EUR --as "$coach" --json)
run dues report "$matchfee" --as "$ben"

# A dinner paid by two, itemised: pizzas shared by everyone and Tim, drinks by who had them, and
# the tip in proportion to what each one's items come to.
dinner=$(id_of expense add --community "$team" --description "Team dinner" --amount 90.00 --currency EUR \
    --paid-by "$coach=50.00,$ana=40.00" --item "Pizzas|60.00|equal:$coach,$ana,$ben,$tim" \
    --item "Drinks|20.00|exact:$coach=8.00,$ana=6.00,$ben=6.00" --tip 10.00 --as "$ana" --json)
run expense show "$dinner" --as "$ben"
run balances show --community "$team" --as "$ben"
# Ben pays most of his share of the dinner back: a settlement.
run settle record --community "$team" --from "$ben" --to "$coach" --amount 22.50 --currency EUR --as "$ben" >/dev/null
run settle suggest --community "$team" --as "$ben"
run expense history --community "$team" --as "$ben"
run export --community "$team" --format csv --as "$ben"
# The servers were down over the holidays: the first run of the job on January 2nd creates
# January's dues (December was skipped), once however many servers run it.
run jobs run --job recurring-charges --now 2027-01-02T08:00:00Z
run jobs run --job recurring-charges --now 2027-01-02T08:00:00Z
run recurring show "$monthly" --as "$ben"
run dues list --community "$team" --as "$ben"
