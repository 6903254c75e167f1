#!/usr/bin/env bash
# Apache Kafka as the oracle: a single KRaft node (broker + controller) on 127.0.0.1, fetched from Maven
# Central through Maven. The compat scenarios are checked against it before Fjord; issue 7's benchmark
# runs against it too.
#
#   compat/lib/apache-kafka.sh fetch                         resolve Kafka and its dependencies into ~/.m2 (once)
#   compat/lib/apache-kafka.sh fetch-tools                   the same for kafka-tools (the perf tools)
#   compat/lib/apache-kafka.sh start DIR [PORT]              start in the background on DIR (formatted on first
#                                                            use, PORT then: default a free one), wait until it
#                                                            listens, print 127.0.0.1:PORT
#   compat/lib/apache-kafka.sh stop DIR                      SIGTERM, SIGKILL after 30 s
#   compat/lib/apache-kafka.sh run PORT ADVERTISED_PORT DIR  in the foreground (exec: its pid is the JVM's), for
#       FJORD_CRASH_BROKER_CMD='exec compat/lib/apache-kafka.sh run {port} {advertised_port} {dir}'
#   compat/lib/apache-kafka.sh prepare PORT ADVERTISED_PORT DIR  write DIR's settings and format it, no start
#   compat/lib/apache-kafka.sh tool CLASS ARGS...            run a kafka-tools main class in the foreground (exec),
#       e.g. org.apache.kafka.tools.ProducerPerformance; KAFKA_TOOL_HEAP_OPTS (default -Xmx512m)
#
# DIR holds server.properties, the log dirs, kafka.log and kafka.pid (start/stop). The ports and the
# settings are written on first use and kept, so that a restart on DIR is the same node.
# KAFKA_HEAP_OPTS overrides the heap (default -Xmx768m, the machine is shared).
set -euo pipefail

KAFKA_VERSION=4.4.0
SCALA_VERSION=2.13
SLF4J_VERSION=1.7.36 # the slf4j-api line Kafka depends on; slf4j-simple prints its log to stderr
CACHE="$HOME/.m2/fjord/apache-kafka-$KAFKA_VERSION" # the poms and classpaths; the jars are in ~/.m2/repository
CLUSTER_ID=ZmpvcmQtb3JhY2xlLTAwMQ                  # fixed: base64url of "fjord-oracle-001"
START_TIMEOUT_S=90

usage() {
  sed -n '6,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# resolve NAME ARTIFACT: has Maven resolve org.apache.kafka:ARTIFACT (and slf4j-simple) into ~/.m2 and
# writes its runtime classpath to $CACHE/NAME/classpath, once.
resolve() {
  local dir="$CACHE/$1"
  [ -s "$dir/classpath" ] && return
  mkdir -p "$dir"
  cat >"$dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>fjord</groupId>
  <artifactId>apache-kafka-$1</artifactId>
  <version>$KAFKA_VERSION</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>$2</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>$SLF4J_VERSION</version></dependency>
  </dependencies>
</project>
EOF
  timeout 600 mvn -q -B -f "$dir/pom.xml" dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile="$dir/classpath.tmp"
  mv "$dir/classpath.tmp" "$dir/classpath"
}

fetch() { resolve broker "kafka_$SCALA_VERSION"; }
fetch_tools() { resolve tools kafka-tools; } # ProducerPerformance, ConsumerPerformance, EndToEndLatency

free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

java_cmd() { # java_cmd MAIN ARGS...: the JVM command line for one of Kafka's main classes
  # shellcheck disable=SC2086 # KAFKA_HEAP_OPTS is a list of options
  echo java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx768m} -XX:+UseG1GC -Djava.awt.headless=true \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dorg.slf4j.simpleLogger.showDateTime=true \
    -cp "$(cat "$CACHE/broker/classpath")" "$@"
}

# configure PORT ADVERTISED_PORT DIR: writes DIR/server.properties and formats DIR on first use. The last three
# settings are the ones compat/run.js gives Fjord's broker (no initial rebalance delay, retention checked every
# 500 ms, cleaner back-off 200 ms), so that the group and cleanup scenarios run alike on both.
configure() {
  local port=$1 advertised=$2 dir=$3
  mkdir -p "$dir"
  if [ ! -f "$dir/server.properties" ]; then
    local controller
    controller=$(free_port)
    cat >"$dir/server.properties.tmp" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$advertised
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/logs
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.check.interval.ms=500
log.cleaner.backoff.ms=200
EOF
    mv "$dir/server.properties.tmp" "$dir/server.properties"
  fi
  if [ ! -f "$dir/logs/meta.properties" ]; then
    # transaction.version=1 (Kafka 4 formats with 2 by default): the transaction protocol Fjord serves, clients
    # adding partitions with AddPartitionsToTxn (TV2: implicitly in Produce, KIP-890).
    $(java_cmd kafka.tools.StorageTool format --cluster-id "$CLUSTER_ID" --config "$dir/server.properties" \
      --feature transaction.version=1 --ignore-formatted) >"$dir/format.log" 2>&1 ||
      { cat "$dir/format.log" >&2; exit 1; }
  fi
}

listening() { # listening PORT
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

configured_port() { # configured_port DIR: the PLAINTEXT port in DIR/server.properties
  sed -n 's/^listeners=PLAINTEXT:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$1/server.properties"
}

start() {
  local dir=$1 port=${2:-}
  if [ -f "$dir/server.properties" ]; then
    port=$(configured_port "$dir")
  elif [ -z "$port" ]; then
    port=$(free_port)
  fi
  if [ -f "$dir/kafka.pid" ] && kill -0 "$(cat "$dir/kafka.pid")" 2>/dev/null; then
    echo "apache-kafka: already running on $dir (pid $(cat "$dir/kafka.pid"))" >&2
    exit 1
  fi
  configure "$port" "$port" "$dir"
  # setsid: the broker outlives this script and the terminal's signals.
  setsid $(java_cmd kafka.Kafka "$dir/server.properties") >>"$dir/kafka.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$dir/kafka.pid"
  for ((i = 0; i < START_TIMEOUT_S * 5; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "apache-kafka: exited at start; last lines of $dir/kafka.log:" >&2
      tail -20 "$dir/kafka.log" >&2
      exit 1
    fi
    if listening "$port"; then
      echo "127.0.0.1:$port"
      return
    fi
    sleep 0.2
  done
  echo "apache-kafka: not listening on $port after $START_TIMEOUT_S s; stopping it" >&2
  stop "$dir"
  exit 1
}

stop() {
  local dir=$1 pid
  [ -f "$dir/kafka.pid" ] || return 0
  pid=$(cat "$dir/kafka.pid")
  if kill -TERM "$pid" 2>/dev/null; then
    for ((i = 0; i < 150; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/kafka.pid"
}

case "${1:-}" in
  fetch) fetch ;;
  fetch-tools) fetch_tools ;;
  start) [ $# -ge 2 ] || usage; fetch; start "$2" "${3:-}" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  run)
    [ $# -eq 4 ] || usage
    fetch
    configure "$2" "$3" "$4"
    exec $(java_cmd kafka.Kafka "$4/server.properties")
    ;;
  prepare)
    [ $# -eq 4 ] || usage
    fetch
    configure "$2" "$3" "$4"
    ;;
  tool)
    [ $# -ge 2 ] || usage
    fetch_tools
    shift
    # shellcheck disable=SC2086 # KAFKA_TOOL_HEAP_OPTS is a list of options
    exec java ${KAFKA_TOOL_HEAP_OPTS:--Xmx512m} -XX:+UseG1GC -Djava.awt.headless=true \
      -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$(cat "$CACHE/tools/classpath")" "$@"
    ;;
  *) usage ;;
esac
