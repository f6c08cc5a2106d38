# feeder/rdkafka.mk
#	Which Kafka client the feeder and the tools (tools/Makefile) are built
#	with; included by both Makefiles.
#
#	RDKAFKA_PREFIX=DIR       the bundled client: the prefix that
#	                         tools/build-librdkafka built (default: that
#	                         prefix when it is built), its librdkafka.a
#	                         linked statically and what it needs (OpenSSL,
#	                         Cyrus SASL, libcurl, zstd, lz4, zlib) from the
#	                         system, dynamically
#	RDKAFKA=system           a system librdkafka through pkg-config instead,
#	                         for distribution packagers: kafka_version.h
#	                         refuses one below the floor at compile time

PKG_CONFIG ?= pkg-config
RDKAFKA_MK_DIR := $(dir $(lastword $(MAKEFILE_LIST)))

ifeq ($(RDKAFKA),system)
RDKAFKA_PREFIX :=
else
RDKAFKA_PREFIX ?= $(shell $(RDKAFKA_MK_DIR)../tools/build-librdkafka --prefix)
endif

ifneq ($(RDKAFKA_PREFIX),)
RDKAFKA_PC := PKG_CONFIG_PATH=$(RDKAFKA_PREFIX)/lib/pkgconfig $(PKG_CONFIG)
# -isystem: the client's header is not ours to hold to -Wextra -Werror
RDKAFKA_CFLAGS := -isystem $(RDKAFKA_PREFIX)/include
# what the objects and programs are rebuilt after (another client, a rebuilt one)
RDKAFKA_DEPS := $(RDKAFKA_PREFIX)/lib/librdkafka.a
RDKAFKA_LIBS := $(RDKAFKA_PREFIX)/lib/librdkafka.a \
	$(shell $(RDKAFKA_PC) --libs $$($(RDKAFKA_PC) --print-requires-private rdkafka)) \
	-lm -ldl -lpthread -lrt
else ifeq ($(RDKAFKA),system)
RDKAFKA_CFLAGS := $(shell $(PKG_CONFIG) --cflags rdkafka 2>/dev/null)
RDKAFKA_LIBS := $(shell $(PKG_CONFIG) --libs rdkafka 2>/dev/null || echo -lrdkafka)
else ifneq ($(filter-out clean uninstall,$(or $(MAKECMDGOALS),all)),)
$(error the bundled Kafka client is not built: run tools/build-librdkafka (make deps does, as root), \
	or build against a system librdkafka of at least the floor that feeder/kafka_version.h names \
	with make RDKAFKA=system)
endif
