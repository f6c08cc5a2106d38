# test/kafka-real/settings.sh — how the suite's cluster is configured, read
# by its cluster script and by lib.sh (a script run alone starts its own):
# a SASL_SSL listener with three users, the suite's feeder, a user the
# tests give no ACL at all and one they deny DESCRIBE; an SSL listener demanding client certificates
# (the principal: the certificate's CN, KR_TLS_USER); an OAUTHBEARER
# listener with an OIDC issuer whose client KR_OIDC_CLIENT gets tokens of
# KR_OIDC_LIFETIME seconds (short: they expire and are refreshed while a
# test runs)
# shellcheck shell=bash disable=SC2034

AK_SASL=1
KR_SASL_USER=ro-feeder
KR_SASL_PASSWORD=feeder-secret-7f3a
KR_SASL_OTHER=ro-nobody
KR_SASL_NODESCRIBE=ro-nodescribe
AK_SASL_USERS="$KR_SASL_USER:$KR_SASL_PASSWORD $KR_SASL_OTHER:nobody-secret $KR_SASL_NODESCRIBE:nodescribe-secret"
KR_TLS_USER=ro-tls-feeder
AK_OIDC=1
KR_OIDC_CLIENT=ro-oidc-feeder
KR_OIDC_SECRET=oidc-secret-51c9
KR_OIDC_LIFETIME=20
AK_OIDC_CLIENTS="$KR_OIDC_CLIENT:$KR_OIDC_SECRET:$KR_OIDC_LIFETIME"
# KIP-848's consumer group protocol (r12-r15) takes the session from the
# broker: 6 s like every classic feeder's session.timeout.ms here
# (test/e2e/lib.sh), not the broker's 45 s, so a kill -9 is taken over as
# soon as under classic (bench/rebalance measures the defaults: start its
# cluster with tools/apache-kafka/run)
export AK_EXTRA_CONFIG="group.consumer.min.session.timeout.ms=1000
group.consumer.session.timeout.ms=6000
group.consumer.min.heartbeat.interval.ms=500
group.consumer.heartbeat.interval.ms=500"
