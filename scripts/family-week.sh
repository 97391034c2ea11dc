#!/usr/bin/env bash
# One family's week of chores, points and rewards through orbitctl (docs/chores.md), printing
# each command and what it answered. Needs a migrated database (DATABASE_URL, or run
# `orbitctl dev` first and export the URL it prints) and jq.
#
#   swift build --product orbitctl && DATABASE_URL=... bash scripts/family-week.sh
set -euo pipefail
cd "$(dirname "$0")/.."
orbitctl=${ORBITCTL:-.build/debug/orbitctl}
suffix=$(date +%s%N | tail -c 7)

run() {
    printf '\n$ orbitctl %s\n' "$*" >&2
    "$orbitctl" "$@"
}
# Runs a --json command, shows its answer, and prints its id.
id_of() {
    local answer
    answer=$(run "$@")
    printf '%s\n' "$answer" >&2
    jq -r .id <<<"$answer"
}

mum=$(id_of user create --email "mum-$suffix@parker.example" --name Mum --json)
dad=$(id_of user create --email "dad-$suffix@parker.example" --name Dad --json)
home=$(id_of community create --name "The Parkers" --settings '{"timezone": "Europe/Berlin"}' --as "$mum" --json)
run community add-member "$home" --user "$dad" --role admin --as "$mum" >/dev/null
mia=$(id_of family add --name Mia --as "$mum" --json)
leo=$(id_of family add --name Leo --as "$mum" --json)
# Two parents: Dad is the household's admin, which is not enough to manage the children's sign-in;
# Mum invites him to be their guardian, and once he accepts he does everything she does.
run family set-pin "$mia" --community "$home" --pin 2468 --as "$dad" || true
run family guardians invite "$mia" --user "$dad" --as "$mum"
run family guardians invite "$leo" --user "$dad" --as "$mum"
run family guardians invitations --as "$dad"
run family guardians accept "$mia" --as "$dad"
run family guardians accept "$leo" --as "$dad"
run family guardians list "$mia" --as "$dad"

# Monday: the parents set the week's chores.
today=$(TZ=Europe/Berlin date +%Y-%m-%d)
monday=$(TZ=Europe/Berlin date -d "$today -$(( $(TZ=Europe/Berlin date +%u) - 1 )) days" +%Y-%m-%d)
dishes=$(id_of chore create --community "$home" --title Dishes --points 20 --difficulty medium --assign "$mia,$leo" --as "$mum" --json)
cat=$(id_of chore create --community "$home" --title "Feed the cat" --points 5 --assign "$leo" \
    --due "${monday}T18:00:00+01:00" --rrule FREQ=DAILY --no-approval --as "$dad" --json)
run chore list --community "$home" --for "$leo" --as "$mum"

# Through the week: Mia does the dishes (Mum records it), Leo tries to do them too.
done=$(id_of chore complete "$dishes" --by "$mia" --as "$mum" --json)
run chore complete "$dishes" --by "$leo" --as "$dad" || true
run chore approve "$done" --as "$dad"
run chore approve "$done" --as "$mum" || true
# Leo feeds the cat every day from Monday to today (no approval needed); a day to come is refused.
day=$monday
while [[ $day < $today || $day == "$today" ]]; do
    run chore complete "$cat" --by "$leo" --occurrence "${day}T17:00:00Z" --as "$mum" >/dev/null
    day=$(date -d "$day +1 day" +%Y-%m-%d)
done
run chore complete "$cat" --by "$leo" --occurrence "${day}T17:00:00Z" --as "$mum" || true
run chore completions --community "$home" --as "$dad"
# Wednesday: the dishes are worth more from now on (Mia's 20 points stay as credited), and the
# week's chores page two at a time.
run chore update "$dishes" --points 25 --title "Dishes and pans" --as "$dad" >/dev/null
run chore list --community "$home" --limit 1 --as "$mum"
# Thursday: Mia's room is done with a photo, or not at all; Dad sees it waiting, then approves.
room=$(id_of chore create --community "$home" --title "Tidy your room" --points 15 --assign "$mia" --requires-photo --as "$mum" --json)
run chore complete "$room" --by "$mia" --as "$mum" || true
pictures=$(mktemp -d)
trap 'rm -rf "$pictures"' EXIT
printf '\xff\xd8\xff\xe0\x00\x10JFIF' >"$pictures/room.jpg"
photo=$(id_of media upload "$pictures/room.jpg" --community "$home" --width 800 --height 600 --as "$mum" --json)
proof=$(id_of chore complete "$room" --by "$mia" --photo "$photo" --note "All tidy" --as "$mum" --json)
run chore completions --community "$home" --pending --as "$dad"
run chore approve "$proof" --as "$dad"
run family avatar "$mia" --media "$photo" --as "$mum"
run points show --community "$home" --for "$mia" --as "$mum" --json
run points show --community "$home" --for "$leo" --as "$mum" --json

# Saturday: rewards.
film=$(id_of reward create --community "$home" --title "Film night" --cost 15 --stock 2 --as "$mum" --json)
first=$(id_of reward redeem "$film" --by "$mia" --as "$mum" --json)
run reward redeem "$film" --by "$mia" --as "$mum" || true
run reward cancel "$first" --as "$dad"
second=$(id_of reward redeem "$film" --by "$mia" --as "$mum" --json)
run reward fulfil "$second" --as "$dad"
# A pony is hidden until Christmas: off Mia's list, nobody redeems it; the parents still see it.
pony=$(id_of reward create --community "$home" --title Pony --cost 100000 --as "$mum" --json)
run reward update "$pony" --hide --as "$mum"
run reward redeem "$pony" --by "$mia" --as "$mum" || true
run reward list --community "$home" --as "$dad"
run points adjust --community "$home" --for "$leo" --delta=-2 --reason "Left the bike out in the rain" --as "$mum"
run points show --community "$home" --for "$mia" --as "$dad" --json
run points show --community "$home" --for "$leo" --as "$dad" --json

# Sunday: Mia gets her own tablet: Mum sets the PIN, Dad pairs it; either sees the devices.
run family set-pin "$mia" --community "$home" --pin 4321 --as "$mum"
run family pair "$mia" --community "$home" --as "$dad"
run family devices list "$mia" --community "$home" --as "$mum"
# Dad becomes the guardian of record: Mia's new shares in expenses are his.
run family guardians record "$mia" --user "$dad" --as "$mum"
run family guardians list "$mia" --as "$mum"
run notifications list --as "$dad" | head -12
