"""The cluster-admin-partitions row for the Python clients, which have no reassignment API: the replica reorder that
makes a partition's preferred leader not lead is done with Kafka's kafka-reassign-partitions (the kafka-tools 4.4.0
artifact through compat/lib/apache-kafka.sh tool, as compat/cluster/partitions-test.js runs it); everything else
with the client's own admin API (confluent_client.py, kafka_python_client.py)."""
import json
import os
import subprocess
import tempfile

from common import check

KAFKA_SH = os.environ.get("FJORD_KAFKA_SCRIPT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "apache-kafka.sh")
TOOL_TIMEOUT_S = 60


def reassign_with_kafka_tool(bootstrap, topic, partition, replicas):
    """kafka-reassign-partitions --execute of partition to replicas (a reorder completes at once: no data moves)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="fjord-partitions-") as plan:
        json.dump({"version": 1, "partitions": [{"topic": topic, "partition": partition, "replicas": replicas}]}, plan)
        plan.flush()
        out = subprocess.run([KAFKA_SH, "tool", "org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--bootstrap-server", bootstrap,
                              "--execute", "--reassignment-json-file", plan.name],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TOOL_TIMEOUT_S, check=False)
    check(out.returncode == 0 and "Successfully started partition reassignment" in out.stdout,
          f"kafka-reassign-partitions --execute {topic}-{partition} to {replicas} (exit {out.returncode}):\n{out.stdout.strip()[-2000:]}")
