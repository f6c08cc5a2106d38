# Makefile — builds and installs the received_orders extension (PGXS) and
# delegates the feeder daemon (feeder/) and the tools (tools/) to their own
# Makefiles.

EXTENSION = received_orders
# The one place the version is written is default_version in the control file.
EXTVERSION = $(shell sed -n "s/^default_version = '\\(.*\\)'/\\1/p" $(EXTENSION).control)

MODULE_big = received_orders
OBJS = \
	extension/received_orders.o \
	extension/event.o \
	extension/event_parse.o \
	extension/event_fast.o \
	extension/store.o \
	extension/envelope.o \
	extension/groups.o \
	extension/frame.o \
	extension/materialize.o \
	extension/batch.o \
	extension/outbox.o \
	extension/outcome.o \
	extension/outcome_label.o \
	extension/quarantine.o \
	extension/positions.o \
	extension/replay.o

# The install script (sql/received_orders--1.0.sql) and the update scripts
# (sql/received_orders--A--B.sql), each frozen once released: CREATE EXTENSION
# runs the install script and then the update path, so no object is written
# twice.
DATA = $(wildcard sql/$(EXTENSION)--*.sql)

# Isolation specs for PGXS users (`make installcheck`); `make test` runs every
# suite, these included, through test/run.
ISOLATION = concurrent-duplicate-commit concurrent-duplicate-abort opposite-order-batches \
	concurrent-position-gap
ISOLATION_OPTS = --inputdir=test/isolation --load-extension=$(EXTENSION)

# make deb's work tree and packages
EXTRA_CLEAN = build

# The library knows the version it was built for: a session whose library is
# older than the installed extension refuses to run (received_orders.c).
PG_CPPFLAGS = -DRO_EXTVERSION=\"$(EXTVERSION)\"

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

# The goals below the PGXS include need it; deps, test, demo, fuzz, sanitize
# and deb install or find their PostgreSQL themselves, sql-only needs none.  Without pg_config
# the include is empty and the first rule would become the default goal,
# failing later with a bare "postgres.h: No such file": say what is missing.
NO_PGXS_GOALS = deps test demo fuzz sanitize deb sql-only
ifeq ($(PGXS),)
ifneq ($(filter-out $(NO_PGXS_GOALS),$(or $(MAKECMDGOALS),all)),)
$(error $(PG_CONFIG) was not found or gave no PGXS: install PostgreSQL's server headers \
	(as root: make deps, which installs postgresql-server-dev-15 and the rest of \
	test/packages.txt's [build] list) or name one: make PG_CONFIG=/path/to/pg_config)
endif
else
include $(PGXS)
endif

# The direct update 1.2 -> 1.4, which PostgreSQL prefers to 1.2 -> 1.3 ->
# 1.4 (the shortest path), is composed of the frozen 1.2--1.3, 1.3--1.4 and
# the small parts around them (sql/parts/), never written by hand; it is
# committed, since PGXS installs DATA from sql/.
UPDATE_1_2_TO_1_4_PARTS = sql/parts/1.2--1.4-prologue.sql sql/$(EXTENSION)--1.2--1.3.sql \
	sql/$(EXTENSION)--1.3--1.4.sql sql/parts/1.2--1.4-epilogue.sql

sql/$(EXTENSION)--1.2--1.4.sql: $(UPDATE_1_2_TO_1_4_PARTS) tools/compose-update-script
	tools/compose-update-script $(UPDATE_1_2_TO_1_4_PARTS) > $@.tmp
	mv $@.tmp $@

# RO_EXTVERSION is compiled into received_orders.o: rebuild it when the
# control file's version changes.
extension/received_orders.o: $(EXTENSION).control

# The daemon and the tools are plain C programs with Makefiles of their own.
SUBDIRS = feeder tools

all: $(SUBDIRS)

$(SUBDIRS):
	$(MAKE) -C $@

# Programs and the man page go under PREFIX; the extension where PGXS says.
PREFIX ?= /usr/local

install: install-subdirs install-man

install-subdirs: $(SUBDIRS)
	for dir in $(SUBDIRS); do $(MAKE) -C $$dir install || exit 1; done

install-man:
	install -D -m 644 docs/received-orders-feeder.1 $(DESTDIR)$(PREFIX)/share/man/man1/received-orders-feeder.1

clean: clean-subdirs

clean-subdirs:
	for dir in $(SUBDIRS); do $(MAKE) -C $$dir clean || exit 1; done

test:
	test/run

# What building from source needs: the Debian packages (test/packages.txt's
# [build] section; as root it installs them, otherwise it prints the line),
# then the Kafka client the feeder carries (tools/build-librdkafka).
deps:
	tools/install-deps build
	tools/build-librdkafka >/dev/null

demo:
	demo/run

# The SQL-only flavour for managed PostgreSQL (docs/sql-only.md): the same
# install and update scripts with each C function's SQL twin, composed by
# tools/build-sql-only into a psql script and a pg_tle wrapper, then checked
# to be what their sources give.
SQL_ONLY_DIR = build/sql-only
SQL_ONLY_SOURCES = $(EXTENSION).control $(DATA) $(wildcard sql/sql-only/*.sql) tools/build-sql-only

$(SQL_ONLY_DIR)/$(EXTENSION).sql: $(SQL_ONLY_SOURCES)
	tools/build-sql-only $(SQL_ONLY_DIR)

sql-only: $(SQL_ONLY_DIR)/$(EXTENSION).sql
	tools/build-sql-only --check $(SQL_ONLY_DIR)

# The long differential fuzzing campaign (test/fuzz/campaign): FUZZ_BUDGET
# inputs (default 2000000), FUZZ_SEED (default: today's date).
fuzz:
	FUZZ_BUDGET=$(FUZZ_BUDGET) FUZZ_SEED=$(FUZZ_SEED) test/fuzz/campaign

# The random-fault soak (test/soak/run): SOAK_SECONDS (default 600) of a
# dirty stream into two groups of feeders under random faults, SOAK_SEED
# (default: random, printed) to replay a run; make test runs it for 60 s
# with a fixed seed (test/soak-short/).  SOAK_KAFKA=apache: on 3 real
# Apache Kafka nodes, with broker kill -9, leader moves and rolling restarts.
soak: all install
	SOAK_SECONDS=$(SOAK_SECONDS) SOAK_SEED=$(SOAK_SEED) SOAK_KAFKA=$(SOAK_KAFKA) test/soak/run

# The extension, the feeder and the tools built with ASan and UBSan, and the
# unit, pgTAP, fuzz and end-to-end suites run on that build (test/sanitize/run;
# make test runs its pgTAP and fuzz part).
sanitize:
	test/sanitize/run unit pgtap fuzz e2e

# Debian packages (debian/, docs/packaging.md), built in a copy of the tree
# so that the package build's clean step leaves this tree alone: the .deb
# files (no -dbgsym ones) end in build/deb/, lintian must find no error.
# debian/control is made again from control.in for the majors this
# machine's postgresql-common supports (15 on Debian 12, 17 on Debian 13).
DEB_DIR = build/deb

deb:
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/src
	tar -cf - --exclude=./build --exclude=./.git --exclude='*.o' --exclude='*.bc' . | \
		tar -xf - -C $(DEB_DIR)/src
	cd $(DEB_DIR)/src && pg_buildext updatecontrol
	cd $(DEB_DIR)/src && DEB_BUILD_OPTIONS="noautodbgsym $$DEB_BUILD_OPTIONS" dpkg-buildpackage -us -uc -b
	rm -rf $(DEB_DIR)/src
	lintian --fail-on error $(DEB_DIR)/*.changes
	ls -l $(DEB_DIR)/*.deb

.PHONY: $(SUBDIRS) install-subdirs install-man clean-subdirs test deps demo fuzz soak sanitize deb sql-only
