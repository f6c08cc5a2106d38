# test/kafka-real/settings.sh — how the suite's cluster is configured, read
# by its cluster script and by lib.sh (a script run alone starts its own):
# a SASL_SSL listener with two users, the suite's feeder and a user the
# tests give no ACL at all
# shellcheck shell=bash disable=SC2034

AK_SASL=1
KR_SASL_USER=ro-feeder
KR_SASL_PASSWORD=feeder-secret-7f3a
KR_SASL_OTHER=ro-nobody
AK_SASL_USERS="$KR_SASL_USER:$KR_SASL_PASSWORD $KR_SASL_OTHER:nobody-secret"
