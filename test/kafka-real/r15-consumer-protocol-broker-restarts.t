#!/bin/bash
# r15-consumer-protocol-broker-restarts.t —
# r06-broker-kill-and-rolling-restart.t (a broker killed, then a rolling
# restart) with every feeder on the consumer group protocol of KIP-848
# (--group-protocol consumer, which Kafka 4.x serves):
# KR_GROUP_PROTOCOL=consumer (lib.sh). The same guarantees (0 lost, 0
# doubled, 0 acknowledged ahead) and one more point: every feeder on that
# protocol, every assignment incremental.

KR_GROUP_PROTOCOL=consumer exec bash "$(dirname "$0")/r06-broker-kill-and-rolling-restart.t"
