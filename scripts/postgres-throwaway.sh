# Sourced by scripts/test and scripts/bench-workers: starts a throwaway PostgreSQL server on loopback
# (fsync off, a random port, data in a temporary folder), exports its URL as THROWAWAY_POSTGRES_URL and
# stops it when the calling script exits.
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
pgdir=$(mktemp -d /tmp/verify-pipeline-pg.XXXXXX)
port=$((20000 + RANDOM % 20000))
runas=()
if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$pgdir"   # initdb refuses to run as root
    runas=(runuser -u postgres --)
fi
stop_postgres() { "${runas[@]}" "$bin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$pgdir"; }
trap stop_postgres EXIT
"${runas[@]}" "$bin/initdb" -D "$pgdir/data" -U postgres --auth=trust -E UTF8 >/dev/null
"${runas[@]}" "$bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w \
    -o "-p $port -k $pgdir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
export THROWAWAY_POSTGRES_URL="postgres://postgres@127.0.0.1:$port"
