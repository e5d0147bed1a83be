# Makefile for the fencing extension (PGXS).
#   make && make install            build and install into the server found by pg_config
#   test/run                        the whole test suite on a throwaway cluster
EXTENSION = fencing
MODULE_big = fencing
OBJS = src/fencing.o \
       src/state/extension_state.o \
       src/clock/epoch_clock.o \
       src/marks/scope_mark.o \
       src/marks/mark_cache.o \
       src/security/bypass.o \
       src/security/scope_acl.o \
       src/security/scope_admin.o \
       src/tokens/declared_token.o \
       src/trigger/fence_config.o \
       src/trigger/fence_trigger.o \
       src/trigger/protect.o
DATA = $(wildcard src/sql/fencing--*.sql)
PGFILEDESC = "fencing - fencing tokens enforced by the database"

PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Werror  # PG headers have unused parameters

REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
ISOLATION = $(patsubst test/specs/%.spec,%,$(sort $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# PGXS tracks no header dependencies: rebuild everything when a header changes
FENCING_HEADERS = $(wildcard src/*.h src/*/*.h)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): $(FENCING_HEADERS)
