# Sourced by scripts/test and scripts/bench-workers: starts a throwaway PostgreSQL server on loopback
# (fsync off, a random port, data in a temporary folder), exports its URL as THROWAWAY_POSTGRES_URL and
# stops it when the calling script exits. It speaks TLS with a certificate for 127.0.0.1 signed by a test CA
# made here (their folder is exported as VERIFY_PIPELINE_TEST_TLS: ca.pem, server.pem, server.key, also
# used by the https submitter tests, and other-host.pem/.key, a certificate for another host name), and the role verify_password must log in with a password (scram).
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
tls="$pgdir/tls"
mkdir -p "$tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3 -subj "/CN=verify-pipeline test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$tls/ca.key" -out "$tls/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n' > "$tls/server.ext"
openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 3 \
    -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
# A certificate from the same CA for another host: a client that checks host names must refuse it on 127.0.0.1.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=elsewhere.invalid" \
    -keyout "$tls/other-host.key" -out "$tls/other-host.csr" 2>/dev/null
printf 'subjectAltName=DNS:elsewhere.invalid\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n' > "$tls/other-host.ext"
openssl x509 -req -in "$tls/other-host.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 3 \
    -extfile "$tls/other-host.ext" -out "$tls/other-host.pem" 2>/dev/null
chmod 600 "$tls/server.key"
[ "$(id -u)" -eq 0 ] && chown -R postgres "$tls"
chmod 755 "$pgdir" "$tls"
chmod 644 "$tls/ca.pem" "$tls/server.pem"
"${runas[@]}" "$bin/initdb" -D "$pgdir/data" -U postgres --auth=trust -E UTF8 >/dev/null
sed -i '1i host all verify_password 127.0.0.1/32 scram-sha-256' "$pgdir/data/pg_hba.conf"
"${runas[@]}" "$bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w \
    -o "-p $port -k $pgdir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 -c ssl=on -c ssl_cert_file=$tls/server.pem -c ssl_key_file=$tls/server.key" start >/dev/null
export THROWAWAY_POSTGRES_URL="postgres://postgres@127.0.0.1:$port"
export VERIFY_PIPELINE_TEST_TLS="$tls"
