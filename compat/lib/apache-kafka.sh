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
#   compat/lib/apache-kafka.sh cluster-prepare DIR COUNT BASEPORT  write and format a cluster's nodes, no start
#   compat/lib/apache-kafka.sh cluster-start DIR COUNT BASEPORT    start a KRaft cluster of COUNT combined nodes
#       (ids 0..COUNT-1; node i: clients on BASEPORT+i, controller on BASEPORT+COUNT+i, all of them voters),
#       wait until every node is up and unfenced, print the bootstrap list 127.0.0.1:BASEPORT,...
#   compat/lib/apache-kafka.sh cluster-stop DIR               SIGTERM every node, SIGKILL after 30 s
#   compat/lib/apache-kafka.sh cluster-kill DIR I             SIGKILL node I (its data stays)
#   compat/lib/apache-kafka.sh cluster-restart DIR I          start node I again, wait until it is up and unfenced
#
# DIR holds server.properties, the log dirs, kafka.log and kafka.pid (start/stop); a cluster's DIR holds
# one such directory per node, DIR/node0... The ports and the settings are written on first use and kept,
# so that a restart on DIR is the same node (or cluster). A cluster has Kafka's default replication of its
# internal topics (3, min ISR 2), capped by COUNT.
# KAFKA_HEAP_OPTS overrides the heap (default -Xms256m -Xmx768m, the machine is shared; a cluster's nodes
# default to -Xms256m -Xmx1g each).
# FJORD_KAFKA_PROPS: more server.properties lines (key=value, one a line), written with the rest on first use (a
# cluster row's own settings, e.g. leader.imbalance.check.interval.seconds=5).
# A directory is formatted with Kafka's own finalized features, as a new Kafka 4.4 cluster (transaction.version
# 2, KIP-890); FJORD_KAFKA_TXN_VERSION=1 formats it with transaction.version=1 instead (the transaction
# version 1 runs). It takes effect when a directory is formatted, its first start: use a new DIR.
set -euo pipefail

KAFKA_VERSION=4.4.0
SCALA_VERSION=2.13
SLF4J_VERSION=1.7.36 # the slf4j-api line Kafka depends on; slf4j-simple prints its log to stderr
CACHE="$HOME/.m2/fjord/apache-kafka-$KAFKA_VERSION" # the poms and classpaths; the jars are in ~/.m2/repository
CLUSTER_ID=ZmpvcmQtb3JhY2xlLTAwMQ                  # fixed: base64url of "fjord-oracle-001"
START_TIMEOUT_S=90

usage() {
  sed -n '6,23p' "$0" | sed 's/^# \{0,1\}//' >&2
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

# write_properties DIR NODE_ID PORT ADVERTISED_PORT CONTROLLER_PORT VOTERS REPLICATION: DIR/server.properties of
# a combined node, its internal topics replicated REPLICATION times (min ISR: 2 at most). The last seven settings
# are the ones compat/run.js gives Fjord's broker (no initial rebalance delay, retention checked every 500 ms,
# cleaner back-off 200 ms; consumer-protocol groups (KIP-848) with a 6 s session and 0.5 s heartbeats, the
# classic rows' group-rebalance timing, where Kafka's defaults are 45 s and 5 s), so that the group and cleanup
# scenarios run alike on both.
write_properties() {
  local dir=$1 id=$2 port=$3 advertised=$4 controller=$5 voters=$6 rf=$7
  local min_isr=$((rf < 2 ? rf : 2))
  cat >"$dir/server.properties.tmp" <<EOF
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$advertised
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/logs
offsets.topic.replication.factor=$rf
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$min_isr
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$min_isr
group.initial.rebalance.delay.ms=0
log.retention.check.interval.ms=500
log.cleaner.backoff.ms=200
group.consumer.min.session.timeout.ms=6000
group.consumer.session.timeout.ms=6000
group.consumer.min.heartbeat.interval.ms=500
group.consumer.heartbeat.interval.ms=500
${FJORD_KAFKA_PROPS:-}
EOF
  mv "$dir/server.properties.tmp" "$dir/server.properties"
}

format_dir() { # format_dir DIR: formats DIR's log dir with the one cluster id, once
  [ -f "$1/logs/meta.properties" ] && return
  # Kafka's default features (transaction.version 2), or transaction.version=$FJORD_KAFKA_TXN_VERSION
  local features=()
  [ -z "${FJORD_KAFKA_TXN_VERSION:-}" ] || features=(--feature "transaction.version=$FJORD_KAFKA_TXN_VERSION")
  $(java_cmd kafka.tools.StorageTool format --cluster-id "$CLUSTER_ID" --config "$1/server.properties" \
    "${features[@]}" --ignore-formatted) >"$1/format.log" 2>&1 ||
    { cat "$1/format.log" >&2; return 1; }
}

# configure PORT ADVERTISED_PORT DIR: a single node (id 1, a free controller port) on DIR, written and
# formatted on first use.
configure() {
  local port=$1 advertised=$2 dir=$3
  mkdir -p "$dir"
  if [ ! -f "$dir/server.properties" ]; then
    local controller
    controller=$(free_port)
    write_properties "$dir" 1 "$port" "$advertised" "$controller" "1@127.0.0.1:$controller" 1
  fi
  format_dir "$dir" || exit 1
}

# cluster_prepare DIR COUNT BASEPORT: DIR/node0..node{COUNT-1} written and formatted (side by side: one JVM each)
# on first use.
cluster_prepare() {
  local dir=$1 count=$2 base=$3 voters="" i pids=()
  for ((i = 0; i < count; i++)); do voters+="${voters:+,}$i@127.0.0.1:$((base + count + i))"; done
  for ((i = 0; i < count; i++)); do
    mkdir -p "$dir/node$i"
    [ -f "$dir/node$i/server.properties" ] ||
      write_properties "$dir/node$i" "$i" $((base + i)) $((base + i)) $((base + count + i)) "$voters" $((count < 3 ? count : 3))
    format_dir "$dir/node$i" &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || exit 1; done
}

listening() { # listening PORT
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

configured_port() { # configured_port DIR: the PLAINTEXT port in DIR/server.properties
  sed -n 's/^listeners=PLAINTEXT:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$1/server.properties"
}

# launch DIR: starts DIR's node in the background, its pid in DIR/kafka.pid; setsid: the broker outlives this
# script and the terminal's signals.
launch() {
  local dir=$1
  if [ -f "$dir/kafka.pid" ] && kill -0 "$(cat "$dir/kafka.pid")" 2>/dev/null; then
    echo "apache-kafka: already running on $dir (pid $(cat "$dir/kafka.pid"))" >&2
    exit 1
  fi
  setsid $(java_cmd kafka.Kafka "$dir/server.properties") >>"$dir/kafka.log" 2>&1 </dev/null &
  echo "$!" >"$dir/kafka.pid"
}

# wait_up DIR [LOG_LINES]: waits until DIR's node listens; given LOG_LINES (kafka.log's length before the launch),
# also until the log says "Kafka Server started" past them, which a node in a cluster says once the controller
# has unfenced it (it can then hold replicas). Returns 1 if the node exited or was not up in time.
wait_up() {
  local dir=$1 since=${2:-} pid port i
  pid=$(cat "$dir/kafka.pid")
  port=$(configured_port "$dir")
  for ((i = 0; i < START_TIMEOUT_S * 5; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "apache-kafka: exited at start; last lines of $dir/kafka.log:" >&2
      tail -20 "$dir/kafka.log" >&2
      return 1
    fi
    if listening "$port" && { [ -z "$since" ] || tail -n +$((since + 1)) "$dir/kafka.log" | grep -q 'Kafka Server started'; }; then
      return 0
    fi
    sleep 0.2
  done
  echo "apache-kafka: $dir not up on $port after $START_TIMEOUT_S s" >&2
  return 1
}

log_lines() { # log_lines DIR: how many lines DIR/kafka.log has
  [ -f "$1/kafka.log" ] && wc -l <"$1/kafka.log" || echo 0
}

start() {
  local dir=$1 port=${2:-}
  if [ -f "$dir/server.properties" ]; then
    port=$(configured_port "$dir")
  elif [ -z "$port" ]; then
    port=$(free_port)
  fi
  configure "$port" "$port" "$dir"
  launch "$dir"
  if ! wait_up "$dir"; then
    echo "apache-kafka: stopping it" >&2
    stop "$dir"
    exit 1
  fi
  echo "127.0.0.1:$port"
}

stop() {
  local dir=$1 pid i
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

cluster_start() {
  local dir=$1 count=$2 base=$3 i since=() bootstrap=""
  cluster_prepare "$dir" "$count" "$base"
  for ((i = 0; i < count; i++)); do
    since+=("$(log_lines "$dir/node$i")")
    launch "$dir/node$i"
  done
  for ((i = 0; i < count; i++)); do
    if ! wait_up "$dir/node$i" "${since[$i]}"; then
      echo "apache-kafka: stopping the cluster" >&2
      cluster_stop "$dir"
      exit 1
    fi
    bootstrap+="${bootstrap:+,}127.0.0.1:$(configured_port "$dir/node$i")"
  done
  echo "$bootstrap"
}

cluster_stop() { # side by side: a node stopped alone waits for the controller quorum it is leaving
  local node pids=()
  for node in "$1"/node*; do
    stop "$node" &
    pids+=($!)
  done
  for node in "${pids[@]}"; do wait "$node"; done
}

cluster_kill() {
  local dir=$1/node$2 pid
  [ -f "$dir/kafka.pid" ] || return 0
  pid=$(cat "$dir/kafka.pid")
  kill -KILL "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  rm -f "$dir/kafka.pid"
}

cluster_restart() {
  local dir=$1/node$2 since
  since=$(log_lines "$dir")
  launch "$dir"
  wait_up "$dir" "$since" || { stop "$dir"; exit 1; }
  echo "127.0.0.1:$(configured_port "$dir")"
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
  cluster-prepare | cluster-start)
    [ $# -eq 4 ] || usage
    fetch
    export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g}
    if [ "$1" = cluster-start ]; then cluster_start "$2" "$3" "$4"; else cluster_prepare "$2" "$3" "$4"; fi
    ;;
  cluster-stop) [ $# -eq 2 ] || usage; cluster_stop "$2" ;;
  cluster-kill) [ $# -eq 3 ] || usage; cluster_kill "$2" "$3" ;;
  cluster-restart)
    [ $# -eq 3 ] || usage
    export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g}
    cluster_restart "$2" "$3"
    ;;
  *) usage ;;
esac
