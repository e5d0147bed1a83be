# test/lib.sh: shared by test/run, the stages (test/stages/*) and the
# benchmarks (test/bench/*).  Installs prerequisites, builds and installs the
# extension, and gives a non-root user and a scratch directory for throwaway
# clusters.  Source it; it defines functions only.

FENCING_PG_MAJOR=${FENCING_PG_MAJOR:-15}
FENCING_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '%s\n' "$*" >&2; }

# The script's path in the tree (test/run, test/stages/demo, ...), for messages.
fencing_cmd() {
    local here
    here=$(cd "$(dirname "$0")" && pwd)
    echo "${here#"$FENCING_TOP"/}/$(basename "$0")"
}

# FENCING_ASROOT: how to run a command as root: nothing when we are root,
# "sudo -n" when sudo works without a password; false when neither (sudo is
# never asked for a password: a test must not stop at a prompt).
fencing_asroot() {
    FENCING_ASROOT=()
    [ "$(id -u)" -eq 0 ] && return 0
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        FENCING_ASROOT=(sudo -n)
        return 0
    fi
    return 1
}

# Debian packages the tests and the demo need, and any named as arguments
# (the packaging check and the examples add theirs); installed with apt-get
# when root, or with sudo.
fencing_prereqs() {
    local pkgs=(make gcc "postgresql-$FENCING_PG_MAJOR" "postgresql-server-dev-$FENCING_PG_MAJOR"
                "postgresql-client-$FENCING_PG_MAJOR" libipc-run-perl perl python3 "$@")
    local missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! fencing_asroot; then
        say "$(fencing_cmd) needs the Debian packages ${missing[*]}, which are not installed: run it as root or as a user with sudo (after \`sudo -v\` if sudo asks for a password: the tests never prompt; it installs them with apt-get), or have them installed first."
        return 1
    fi
    say "installing: ${missing[*]}"
    "${FENCING_ASROOT[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
    "${FENCING_ASROOT[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# Debian packages that building the .deb needs (debian/control's Build-Depends).
FENCING_PACKAGE_PREREQS=(dpkg-dev debhelper postgresql-server-dev-all)

# Debian packages that test/stages/exporter needs (the Prometheus exporter, an HTTP client).
FENCING_EXPORTER_PREREQS=(prometheus-postgres-exporter curl)

# FENCING_PG_CONFIG chooses another (e.g. relocated) installation of the server.
fencing_pg_config() {
    echo "${FENCING_PG_CONFIG:-/usr/lib/postgresql/$FENCING_PG_MAJOR/bin/pg_config}"
}

# Ports of the throwaway clusters: FENCING_PORT_BASE + n, below the
# kernel's ephemeral range (32768 up) so that no outgoing connection holds
# one when a server binds it (several checkouts
# can then run their suites side by side).
fencing_port() {
    echo $(( ${FENCING_PORT_BASE:-25410} + $1 ))
}

fencing_bindir() {
    "$(fencing_pg_config)" --bindir
}

# Build warning-free (-Werror: FENCING_WERROR=1) and install into the
# server's directories: directly when we may write there, else as root or
# with password-less sudo.  Returns 1 when the build failed, 2 when only the
# install could not be done (no rights; it says in one sentence what would
# do), 0 when installed (or when what is installed is this build already).
fencing_build_install() {
    local pgc pkglib share f same=1
    pgc=$(fencing_pg_config)
    if ! "$pgc" --version >/dev/null 2>&1; then
        say "$(fencing_cmd): no PostgreSQL at $pgc: install postgresql-server-dev-$FENCING_PG_MAJOR (as root or with sudo), or set FENCING_PG_CONFIG to the pg_config of the PostgreSQL to use."
        return 2
    fi
    make -s -C "$FENCING_TOP" PG_CONFIG="$pgc" FENCING_WERROR=1 >&2 || { say "$(fencing_cmd): the build failed (make, output above)."; return 1; }
    pkglib=$("$pgc" --pkglibdir) share=$("$pgc" --sharedir)
    if [ -w "$pkglib" ] && [ -w "$share/extension" ]; then
        make -s -C "$FENCING_TOP" PG_CONFIG="$pgc" install >&2
        return
    fi
    if fencing_asroot; then
        "${FENCING_ASROOT[@]}" make -s -C "$FENCING_TOP" PG_CONFIG="$pgc" install >&2
        return
    fi
    # no rights: fine if this very build is installed already
    cmp -s "$FENCING_TOP/fencing.so" "$pkglib/fencing.so" || same=
    for f in "$FENCING_TOP"/fencing.control "$FENCING_TOP"/src/sql/fencing--*.sql "$FENCING_TOP"/src/sql/upgrade/fencing--*.sql; do
        cmp -s "$f" "$share/extension/$(basename "$f")" || same=
    done
    if [ -n "$same" ]; then
        say "$(fencing_cmd): this build is installed in $pkglib already; not installing it again."
        return 0
    fi
    say "$(fencing_cmd) built the extension but cannot install it into $pkglib (you may not write there): run it as root or as a user with sudo (after \`sudo -v\` if sudo asks for a password: the tests never prompt), or set FENCING_PG_CONFIG to the pg_config of a PostgreSQL installation you own."
    return 2
}

# The user that runs Postgres: Postgres refuses to run as root.
fencing_test_user() {
    if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

# Run a command as the test user, keeping the environment we pass explicitly.
# As root, from a directory postgres can enter (FENCING_TEST_CWD, else /):
# the caller's may be /root or a mode-700 mktemp directory, and postgres,
# initdb, pg_ctl and Patroni's children all change to their working
# directory or complain that they cannot.
as_test_user() {
    if [ "$(id -u)" -eq 0 ]; then
        (cd "${FENCING_TEST_CWD:-/}" && exec runuser -u postgres -- env PATH="$(fencing_bindir):$PATH" "$@")
    else
        env PATH="$(fencing_bindir):$PATH" "$@"
    fi
}

# A scratch directory the test user owns.
fencing_scratch() {
    local dir; dir=$(mktemp -d "${TMPDIR:-/tmp}/fencing.XXXXXX") || { say "$(fencing_cmd): mktemp -d failed in ${TMPDIR:-/tmp}"; return 1; }
    chmod 755 "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    echo "$dir"
}

# A copy of the source tree the test user can write test results into.
fencing_tree_copy() {
    local dest=$1
    (cd "$FENCING_TOP" && tar --exclude=.git --exclude=results --exclude=output_iso \
        --exclude=tmp_check --exclude=log -cf - .) | (cd "$dest" && tar -xf -)
    [ "$(id -u)" -eq 0 ] && chown -R postgres: "$dest"
    return 0
}

# Start a throwaway cluster in $1 on port $2, private socket in $1.
fencing_cluster_start() {
    local dir=$1 port=$2; shift 2
    as_test_user initdb -D "$dir/data" -A trust -U postgres --no-sync >/dev/null || return 1
    {
        echo "port = $port"
        echo "listen_addresses = ''"
        echo "unix_socket_directories = '$dir'"
        for opt in "$@"; do echo "$opt"; done
    } >> "$dir/data/postgresql.conf"
    as_test_user pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
}

fencing_cluster_stop() {
    local dir=$1
    [ -f "$dir/data/postmaster.pid" ] || return 0
    as_test_user pg_ctl -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
        as_test_user pg_ctl -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1
    return 0
}

# fencing_stop_pid PID [GRACE]: SIGTERM, then SIGKILL after GRACE seconds
# (default 10); never waits longer.  Reaps PID if it is our child.
fencing_stop_pid() {
    local pid=$1 grace=${2:-10} i
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    for i in $(seq 1 $((grace * 10))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && { say "pid $pid did not stop within $grace s: SIGKILL"; kill -KILL "$pid" 2>/dev/null; }
    wait "$pid" 2>/dev/null
    return 0
}

# fencing_on_exit FUNCTION: run FUNCTION once when the script ends, however
# it ends (normally, on an error, on Ctrl-C, on a timeout's SIGTERM).  While
# it runs, further INT/TERM are ignored: a second signal (a timeout, an
# impatient Ctrl-C) does not cut the cleanup short.  Every wait in it must be
# bounded (fencing_stop_pid, pg_ctl -t).
fencing_on_exit() {
    FENCING_CLEANUP_FN=$1
    trap '_fencing_cleanup' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
}
_fencing_cleanup() {
    local rc=$?
    trap '' INT TERM HUP PIPE
    trap - EXIT
    "$FENCING_CLEANUP_FN"
    exit "$rc"
}
