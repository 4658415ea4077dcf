#!/usr/bin/env bash
# bench-cli: the query CLI against SQLite's own shell and plain Python on
# the same rows, each pair run alternately, ROUNDS rounds, medians printed.
#
#   scripts/bench-cli.sh            (or: make bench-cli)
#
# ROWS (default 1000000) rows {"id":N,"name":"user-K","score":X.5,"ok":B}
# of a four-column kind. Measured, each against a fresh store or database:
#   append    query append of the file (one append)      vs the sqlite3 shell
#             (.import into a temp table, INSERT ... SELECT json_extract,
#             WAL, synchronous=NORMAL) and Python executemany (one
#             transaction, same pragmas)
#   append spooled: the same append while query serve owns the store, so
#             that the rows go through the spool (the serve is started
#             before and stopped after each run, outside the measure);
#             its time runs until the owner's result is back
#   scan      query scan --stream s1 > /dev/null          vs the sqlite3 shell
#             printing json_object per row, and Python SELECT + json.dumps
#   csv, parquet: query scan --format F --out FILE        rows/s only
# PARTS (default "append scan") picks what runs: "append" alone measures
# the appends only.
# ratio = baseline median / our median: above 1 we are faster; given for
# the elapsed time and for the processor time (user + system), which a
# machine busy with other work disturbs less. Processor time and peak RSS
# come from /usr/bin/time (GNU time) when present. A baseline
# whose tool (sqlite3, python3) is missing is skipped with a message.

set -euo pipefail

ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-3}
PARTS=${PARTS:-append scan}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/bin/query

have() { command -v "$1" >/dev/null 2>&1; }

GNU_TIME=
if [ -x /usr/bin/time ] && /usr/bin/time -f '%e' true >/dev/null 2>&1; then
	GNU_TIME=/usr/bin/time
else
	echo "note: no GNU time at /usr/bin/time: no processor time nor peak RSS (apt-get install time)" >&2
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bench-cli.XXXXXX")
chmod 0700 "$WORK"
trap 'rm -rf "$WORK"' EXIT

echo "== build bin/query"
(cd "$ROOT/cmd/query" && go build -o "$BIN" .)

echo "== generate $ROWS rows"
awk -v n="$ROWS" 'BEGIN {
	for (i = 1; i <= n; i++)
		printf "{\"id\":%d,\"name\":\"user-%d\",\"score\":%d.5,\"ok\":%s}\n", i, i % 1000, i % 100, (i % 2 ? "true" : "false")
}' >"$WORK/rows.ndjson"
cat >"$WORK/kinds.json" <<'JSON'
{"kinds": [{"name": "ev", "columns": [
  {"name": "id", "type": "integer"},
  {"name": "name", "type": "string"},
  {"name": "score", "type": "number"},
  {"name": "ok", "type": "bool"}]}]}
JSON

# measure NAME CMD...: runs CMD (stdout to /dev/null unless it redirects
# itself), appends "seconds rss_kb cpu_seconds" to $WORK/NAME.
measure() {
	local name=$1
	shift
	local out=$WORK/time.out
	if [ -n "$GNU_TIME" ]; then
		"$GNU_TIME" -f '%e %M %U %S' -o "$out" bash -c '"$@"' _ "$@" >/dev/null
	else
		local t0 t1
		t0=$(date +%s.%N)
		"$@" >/dev/null
		t1=$(date +%s.%N)
		awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b, 0, 0, 0 }' >"$out"
	fi
	tail -n 1 "$out" | awk '{ print $1, $2, $3 + $4 }' >>"$WORK/$name"
}

# median NAME FIELD: the median of column FIELD (1 time, 2 rss, 3 cpu) of
# NAME.
median() {
	awk -v f="$2" '{print $f}' "$WORK/$1" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

ours_append() {
	local dir=$WORK/store-$1
	rm -rf "$dir"
	"$BIN" --store "$dir/records.sqlite" append --stream s1 --kind ev --schema "$WORK/kinds.json" "$WORK/rows.ndjson"
}

shell_append() {
	local db=$WORK/shell-$1.db
	rm -f "$db" "$db-wal" "$db-shm"
	sqlite3 "$db" <<SQL
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
CREATE TABLE ev (id INTEGER, name TEXT, score REAL, ok INTEGER);
CREATE TEMP TABLE raw (line TEXT);
.mode ascii
.separator "\037" "\n"
.import $WORK/rows.ndjson raw
BEGIN;
INSERT INTO ev SELECT json_extract(line, '$.id'), json_extract(line, '$.name'), json_extract(line, '$.score'), json_extract(line, '$.ok') FROM temp.raw;
COMMIT;
SQL
}

py_append() {
	local db=$WORK/py-$1.db
	rm -f "$db" "$db-wal" "$db-shm"
	python3 - "$db" "$WORK/rows.ndjson" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.execute("CREATE TABLE ev (id INTEGER, name TEXT, score REAL, ok INTEGER)")
def rows(path):
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            yield (r["id"], r["name"], r["score"], r["ok"])
db.execute("BEGIN")
db.executemany("INSERT INTO ev VALUES (?, ?, ?, ?)", rows(sys.argv[2]))
db.execute("COMMIT")
PY
}

# serve_for N: starts query serve owning store-spooled-N, waits until it
# owns it, and prints its pid.
serve_for() {
	local dir=$WORK/store-spooled-$1
	rm -rf "$dir"
	mkdir -p "$dir"
	"$BIN" --store "$dir/records.sqlite" serve --addr 127.0.0.1:0 >/dev/null 2>"$dir/serve.log" &
	local pid=$! i
	for i in $(seq 1 600); do
		grep -q "msg=role role=owner" "$dir/serve.log" && break
		kill -0 "$pid" 2>/dev/null || { echo "query serve exited: $(cat "$dir/serve.log")" >&2; exit 1; }
		sleep 0.1
	done
	echo "$pid"
}

ours_append_spooled() {
	"$BIN" --store "$WORK/store-spooled-$1/records.sqlite" append --stream s1 --kind ev --schema "$WORK/kinds.json" "$WORK/rows.ndjson" |
		grep -q '"role":"spooled"'
}

# measure_spooled N: measures ours_append_spooled N with a serve owning
# the store.
measure_spooled() {
	local pid
	pid=$(serve_for "$1")
	measure append_spooled ours_append_spooled "$1"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	rm -rf "$WORK/store-spooled-$1"
}

ours_scan() { "$BIN" --store "$WORK/store-1/records.sqlite" scan --stream s1; }

shell_scan() {
	sqlite3 "$WORK/shell-1.db" "SELECT json_object('id', id, 'name', name, 'score', score, 'ok', json(CASE ok WHEN 1 THEN 'true' ELSE 'false' END)) FROM ev ORDER BY rowid"
}

py_scan() {
	python3 - "$WORK/py-1.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
out = sys.stdout
for id, name, score, ok in db.execute("SELECT id, name, score, ok FROM ev ORDER BY rowid"):
    out.write(json.dumps({"id": id, "name": name, "score": score, "ok": bool(ok)}) + "\n")
PY
}

ours_export() { "$BIN" --store "$WORK/store-1/records.sqlite" scan --stream s1 --format "$1" --out "$WORK/out.$1" --force; }

# The measured steps run in a child bash under time.
export WORK BIN
export -f ours_append ours_append_spooled shell_append py_append ours_scan shell_scan py_scan ours_export

SHELL_OK=1 PY_OK=1
have sqlite3 || { SHELL_OK=0; echo "skip: no sqlite3 on PATH: no shell baselines (apt-get install sqlite3)"; }
have python3 || { PY_OK=0; echo "skip: no python3 on PATH: no Python baselines"; }

part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

part append && for r in $(seq 1 "$ROUNDS"); do
	echo "== round $r of $ROUNDS"
	# Alternate which goes first from one round to the next.
	if [ $((r % 2)) -eq 1 ]; then
		measure append ours_append "$r"
		measure_spooled "$r"
		[ $SHELL_OK = 1 ] && measure append_shell shell_append "$r"
		[ $PY_OK = 1 ] && measure append_py py_append "$r"
	else
		[ $PY_OK = 1 ] && measure append_py py_append "$r"
		[ $SHELL_OK = 1 ] && measure append_shell shell_append "$r"
		measure_spooled "$r"
		measure append ours_append "$r"
	fi
done
if part scan && ! part append; then # scan reads the first round's stores
	ours_append 1 >/dev/null
	[ $SHELL_OK = 1 ] && shell_append 1 >/dev/null
	[ $PY_OK = 1 ] && py_append 1 >/dev/null
fi
part scan && for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then
		measure scan ours_scan
		[ $SHELL_OK = 1 ] && measure scan_shell shell_scan
		[ $PY_OK = 1 ] && measure scan_py py_scan
	else
		[ $PY_OK = 1 ] && measure scan_py py_scan
		[ $SHELL_OK = 1 ] && measure scan_shell shell_scan
		measure scan ours_scan
	fi
	measure csv ours_export csv
	measure parquet ours_export parquet
done

echo
echo "== $ROWS rows, medians of $ROUNDS rounds (ratio = baseline / ours; above 1: we are faster)"
printf '%-34s %10s %10s %12s %12s\n' measure seconds cpu_s rows/s peak_rss_MB
div() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > 0 ? a / b : 0) }'; }
row() {
	[ -s "$WORK/$1" ] || return 0
	local t rss
	t=$(median "$1" 1)
	rss=$(median "$1" 2)
	printf '%-34s %10.2f %10.2f %12.0f %12.1f\n' "$2" "$t" "$(median "$1" 3)" "$(div "$ROWS" "$t")" "$(div "$rss" 1024)"
}
ratio() {
	[ -s "$WORK/$2" ] && [ -s "$WORK/$3" ] || return 0
	printf '%-34s %10.2f %10.2f' "$1" "$(div "$(median "$2" 1)" "$(median "$3" 1)")" "$(div "$(median "$2" 3)" "$(median "$3" 3)")"
	if [ -n "${4:-}" ]; then printf '   (goal >= %s)\n' "$4"; else echo; fi
}
row append "query append"
row append_spooled "query append (spooled, serve owns)"
[ $SHELL_OK = 1 ] && row append_shell "sqlite3 shell import + insert"
[ $PY_OK = 1 ] && row append_py "python executemany"
row scan "query scan (ndjson)"
[ $SHELL_OK = 1 ] && row scan_shell "sqlite3 shell json_object"
[ $PY_OK = 1 ] && row scan_py "python select + json.dumps"
row csv "query scan --format csv --out"
row parquet "query scan --format parquet --out"
echo
printf '%-34s %10s %10s\n' ratio elapsed cpu
ratio "append vs sqlite3 shell" append_shell append 0.6
ratio "append vs python" append_py append 2
ratio "append spooled vs python" append_py append_spooled
ratio "scan vs sqlite3 shell" scan_shell scan 0.5
ratio "scan vs python" scan_py scan 3
