#!/usr/bin/env bash
# corrupt-fuzz crashpoints against programs no one here wrote: the sqlite3 shell (rollback
# journal and WAL), Python's json.dump in place and through os.replace, and Foundation's
# Data.write(to:options: .atomic) and FileManager.replaceItemAt; each cut short (kills, power
# cuts), then made to fail at every operation (--faults all). Reports go to
# Reports/crashpoints-real/.
#
#   bash Examples/RealTargets/crashpoints-real.sh [corrupt-fuzz products folder]
set -uo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-$(swift build -c release --show-bin-path)}"
here=Examples/RealTargets
run() {
    local title="$1"; shift
    for faults in "" "--faults all"; do
        echo "== $title${faults:+, $faults}"
        # shellcheck disable=SC2086
        "$bin/corrupt-fuzz" crashpoints "$@" $faults --reports Reports/crashpoints-real 2>/dev/null | grep -v '^    reproducer:'
        echo "exit ${PIPESTATUS[0]}"
    done
}
# One transaction, and repeatable: run again, it leaves the same rows.
insert="BEGIN; INSERT OR REPLACE INTO notes(id, text) VALUES (4, 'note 4'), (5, 'note 5'); UPDATE notes SET text = 'note one' WHERE id = 1; COMMIT;"
run "sqlite3, rollback journal" --target "sqlite3 @@/notes.db \"$insert\"" --data $here/data/sqlite-rollback --check "$here/sqlite-check.sh @@"
run "sqlite3, WAL" --target "sqlite3 @@/notes.db \"$insert\"" --data $here/data/sqlite-wal --check "$here/sqlite-check.sh @@"
run "Python json.dump in place" --target "python3 $here/json-inplace.py @@" --data $here/data/json --check "python3 $here/json-check.py @@"
run "Python json.dump and os.replace" --target "python3 $here/json-replace.py @@" --data $here/data/json --check "python3 $here/json-check.py @@"
run "Foundation Data.write(.atomic)" --target "$bin/foundation-atomic-write @@" --data $here/data/foundation --check "python3 $here/json-check.py @@"
run "Foundation FileManager.replaceItemAt" --target "$bin/foundation-atomic-write --replace @@" --data $here/data/foundation --check "python3 $here/json-check.py @@"
