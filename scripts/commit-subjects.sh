#!/usr/bin/env bash
# Checks the project's commit messages: every commit after the one that made it the rule
# (BASE) has a subject of at most 72 characters and, when it has a body, a blank line between
# them. Older commits are left as they are. A checkout without that history (a shallow clone,
# an archive) skips the check and says so.
#
#   scripts/commit-subjects.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=353bdda05594ec38417fb2f23506f12df497d765
if ! git rev-parse -q --verify "$BASE^{commit}" >/dev/null 2>&1; then
    echo "commit-subjects.sh: the history before this checkout is missing: not checked"
    exit 0
fi
bad=0
while read -r commit; do
    subject=$(git log -1 --format=%s "$commit")
    second=$(git log -1 --format=%B "$commit" | sed -n 2p)
    if [ "${#subject}" -gt 72 ]; then
        echo "commit ${commit:0:10}: its subject is ${#subject} characters (at most 72): $subject" >&2
        bad=1
    fi
    if [ -n "$second" ]; then
        echo "commit ${commit:0:10}: no blank line between its subject and its body" >&2
        bad=1
    fi
done < <(git rev-list "$BASE..HEAD")
[ "$bad" = 0 ] && echo "commit-subjects.sh: $(git rev-list --count "$BASE..HEAD") commits since the rule, each subject at most 72 characters"
exit "$bad"
