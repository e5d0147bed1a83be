#!/usr/bin/env python3
"""A leader worker with fencing's leases, in Python (psycopg 3).

    python3 leader_worker.py NAME [SCOPE]      # connection from PGHOST, PGPORT, ...

Run several: one leads, the others wait. The leader elects itself with
fencing.acquire_lease() and gets a term; it declares that term as its fencing
token in every transaction (fencing.use_token) and writes; it renews the lease
between batches. It stops writing the moment the database says it is no
longer the leader: a write rejected with SQLSTATE ZF001 (a newer term exists)
or a refused renewal. Then it goes back to electing itself: a new lease always
comes with a new, higher term, so retrying is safe.

The table is examples/schema.sql's. Debian: apt-get install python3-psycopg.
"""
import os
import socket
import sys
import time

import psycopg

NAME = sys.argv[1]
SCOPE = sys.argv[2] if len(sys.argv) > 2 else "example-python"
HOLDER = f"{NAME}@{socket.gethostname()}:{os.getpid()}"  # unique per process
TTL = float(os.environ.get("LEASE_TTL", "2"))          # lease, seconds
BATCHES = int(os.environ.get("BATCHES", "3"))          # work to do, then quit
ITEMS = int(os.environ.get("ITEMS", "3"))              # transactions per batch
GAP = float(os.environ.get("ITEM_GAP", "0.3"))         # seconds between them


def log(msg):
    print(f"{NAME}: {msg}", flush=True)


def connect():
    # Autocommit: each lease call is a transaction of its own (never call them
    # inside a transaction that writes protected tables). A frozen worker must
    # not keep a transaction open past its lease: the server ends it.
    return psycopg.connect(autocommit=True,
                           options=f"-c idle_in_transaction_session_timeout={int(TTL * 500)}ms")


def acquire(conn):
    """Wait until we hold the lease; return our term."""
    while True:
        granted, term, holder, until = conn.execute(
            "SELECT granted, term, lease_holder, expires_at"
            "  FROM fencing.acquire_lease(%s, %s, make_interval(secs => %s))",
            (SCOPE, HOLDER, TTL)).fetchone()
        if granted:
            log(f"leading with token {term}")
            return term
        log(f"lease held by {holder} (term {term}) until {until:%H:%M:%S.%f}; waiting")
        time.sleep(TTL / 4)


def renew(conn, term):
    renewed, _, holder, current = conn.execute(
        "SELECT * FROM fencing.renew_lease(%s, %s, %s, make_interval(secs => %s))",
        (SCOPE, HOLDER, term, TTL)).fetchone()
    if not renewed:
        if holder:
            log(f"renewal refused: the lease is {holder}'s (term {current}); stop writing")
        else:
            log(f"renewal refused: the lease expired and nobody holds it (my term {term} is over); stop writing")
    return renewed


def write_batch(conn, term, batch):
    for item in range(1, ITEMS + 1):
        with conn.transaction():
            # The token is the term; it lasts until this transaction ends.
            conn.execute("SELECT fencing.use_token(%s, %s)", (SCOPE, term))
            conn.execute("INSERT INTO example_writes (scope, worker, batch, item)"
                         " VALUES (%s, %s, %s, %s)", (SCOPE, HOLDER, batch, item))
        log(f"batch {batch} item {item} committed (token {term})")
        time.sleep(GAP)


def main():
    done = 0
    while done < BATCHES:
        try:
            with connect() as conn:
                term = acquire(conn)
                while done < BATCHES:
                    write_batch(conn, term, done + 1)
                    done += 1
                    if done < BATCHES and not renew(conn, term):
                        break                    # elect again
                else:
                    conn.execute("SELECT fencing.release_lease(%s, %s, %s)", (SCOPE, HOLDER, term))
                    log("released the lease")
        except psycopg.Error as e:
            if e.sqlstate == "ZF001":            # stale fencing token: someone newer leads
                log(f"write rejected, SQLSTATE ZF001: {e.diag.message_detail}; stop writing")
            elif isinstance(e, psycopg.OperationalError):
                log(f"connection lost ({str(e).strip()}); stop writing")
            else:
                raise
            time.sleep(TTL / 4)                  # then elect again
    log(f"done: {BATCHES} batches")


if __name__ == "__main__":
    main()
