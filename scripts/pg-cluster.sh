# Sourced by the PostgreSQL benchmarks: starts a temporary PostgreSQL 15
# cluster on 127.0.0.1 (scram-sha-256, as the `postgres` user when run as
# root) in a new directory, and stops and removes it on exit. Sets DIR
# (the directory, also the benchmark's working directory) and URL.
# `start_pgbouncer MODE POOL_SIZE` then starts PgBouncer in front of it
# (Debian's pgbouncer, stopped on exit too) and sets BOUNCER_URL.
PG_BIN="${GOALKEEPER_PG_BIN:-/usr/lib/postgresql/15/bin}"
[[ -x "$PG_BIN/initdb" ]] || { echo "$(basename "$0"): needs PostgreSQL 15 (apt-get install postgresql-15) or GOALKEEPER_PG_BIN" >&2; exit 2; }
DIR="$(mktemp -d "${TMPDIR:-/tmp}/goalkeeper-pgbench.XXXXXX")"
chmod 755 "$DIR"
as_pg=()
if [[ $(id -u) -eq 0 ]]; then as_pg=(runuser -u postgres --); chown postgres "$DIR"; fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cleanup() {
    [[ -f "$DIR/pgbouncer.pid" ]] && kill "$(cat "$DIR/pgbouncer.pid")" 2>/dev/null
    "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap cleanup EXIT
echo bench > "$DIR/pw"
"${as_pg[@]}" "$PG_BIN/initdb" -D "$DIR/data" -U bench --pwfile="$DIR/pw" --auth=scram-sha-256 --no-sync >/dev/null
"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR" start >/dev/null
URL="postgres://bench:bench@127.0.0.1:$PORT/postgres"

start_pgbouncer() {
    local mode=$1 pool=$2 port
    [[ -x /usr/sbin/pgbouncer ]] || { echo "$(basename "$0"): needs PgBouncer (apt-get install pgbouncer)" >&2; exit 2; }
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    echo '"bench" "bench"' > "$DIR/users.txt"
    cat > "$DIR/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$PORT
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $DIR/users.txt
pool_mode = $mode
default_pool_size = $pool
max_client_conn = 1000
logfile = $DIR/pgbouncer.log
pidfile = $DIR/pgbouncer.pid
INI
    [[ ${#as_pg[@]} -gt 0 ]] && chown postgres "$DIR/users.txt" "$DIR/pgbouncer.ini"
    "${as_pg[@]}" /usr/sbin/pgbouncer -d "$DIR/pgbouncer.ini"
    BOUNCER_URL="postgres://bench:bench@127.0.0.1:$port/postgres"
}
