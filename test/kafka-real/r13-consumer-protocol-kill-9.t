#!/bin/bash
# r13-consumer-protocol-kill-9.t — r02-kill-9-feeder.t (a feeder killed with
# kill -9, twice) with every feeder on the consumer group protocol of
# KIP-848 (--group-protocol consumer, which Kafka 4.x serves):
# KR_GROUP_PROTOCOL=consumer (lib.sh). The same guarantees (0 lost, 0
# doubled, 0 acknowledged ahead) and one more point: every feeder on that
# protocol, every assignment incremental.

KR_GROUP_PROTOCOL=consumer exec bash "$(dirname "$0")/r02-kill-9-feeder.t"
