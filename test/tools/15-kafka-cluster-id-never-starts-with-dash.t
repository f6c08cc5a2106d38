#!/bin/bash
# test/tools/15-kafka-cluster-id-never-starts-with-dash.t — the cluster id
# test/lib/apache_kafka.sh gives Kafka's StorageTool (ak__cluster_id) is
# what `kafka-storage random-uuid` makes: 22 base64url characters, and never
# one starting with "-".  StorageTool's argument parser reads "format -t
# -xyz..." as -t without its value ("argument --cluster-id/-t: expected one
# argument"), so a cluster start failed about once in 64 (the demo's real
# Kafka, in a whole run); Kafka's own Uuid.randomUuid draws again.  2,000
# draws: an id starting with "-" comes up in about 31 of them when nothing
# prevents it (1 in 64), so the first point fails without the fix.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/apache_kafka.sh
. "$RO_ROOT/test/lib/apache_kafka.sh"

tap_plan 2

dash=0
bad=
for ((i = 0; i < 2000; i++)); do
	id=$(ak__cluster_id)
	[[ $id != -* ]] || dash=$((dash + 1))
	[[ $id =~ ^[A-Za-z0-9_-]{22}$ ]] || bad+=" $id"
done
tap_is "$dash" 0 "2,000 cluster ids: none starts with \"-\""
tap_is "${bad# }" "" "2,000 cluster ids: each is 22 base64url characters, as random-uuid makes them"
