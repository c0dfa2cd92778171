# tap.sh: one TAP line per check, for the scripts under tools/testing that
# source it.  It sets passed=0 failed=0 and defines
#
#   result STATUS NAME [LOG]
#
# which prints "ok N - NAME" when STATUS is 0, else "not ok N - NAME" and
# the last 20 lines of LOG (when it has any) as "# " comments, and counts
# it.  It returns 0: a failed check does not stop the script.
# shellcheck shell=bash
passed=0 failed=0
result() {
	if [ "$1" -eq 0 ]; then
		passed=$((passed + 1)); echo "ok $((passed + failed)) - $2"
	else
		failed=$((failed + 1)); echo "not ok $((passed + failed)) - $2"
		[ -n "${3:-}" ] && [ -s "$3" ] && sed 's/^/# /' "$3" | tail -20
	fi
	return 0
}
