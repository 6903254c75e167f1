"""Fjord compatibility client: kafka-python. Usage: kafka_python_client.py BOOTSTRAP SCENARIO."""
import sys
import time

from kafka.admin import KafkaAdminClient, NewTopic


def connect(bootstrap, admin):
    cluster = admin.describe_cluster()
    brokers = cluster["brokers"]
    check(len(brokers) == 1, f"expected 1 broker, got {brokers}")
    check(f"{brokers[0]['host']}:{brokers[0]['port']}" == bootstrap, f"expected broker {bootstrap}, got {brokers[0]}")
    check(cluster.get("cluster_id"), f"no cluster id in {cluster}")


def admin_topics(bootstrap, admin):
    name = f"compat-kafka-python-{time.time_ns()}"
    response = admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=1)])
    errors = [t for t in response.topic_errors if t[1] != 0]
    check(not errors, f"CreateTopics errors: {errors}")

    def listed():
        check(name in admin.list_topics(), f"created topic {name} not listed")
        partitions = admin.describe_topics([name])[0]["partitions"]
        check(len(partitions) == 3, f"topic {name} has {len(partitions)} partitions, expected 3")
    retry(listed)
    response = admin.delete_topics([name])
    errors = [t for t in response.topic_error_codes if t[1] != 0]
    check(not errors, f"DeleteTopics errors: {errors}")

    def gone():
        check(name not in admin.list_topics(), f"deleted topic {name} still listed")
    retry(gone)


SCENARIOS = {"connect": connect, "admin-topics": admin_topics}


def check(ok, message):
    if not ok:
        raise AssertionError(message)


def retry(f, seconds=10):
    """Runs f until it succeeds or `seconds` pass (metadata propagation)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return f()
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: kafka_python_client.py BOOTSTRAP SCENARIO")
    bootstrap, scenario = sys.argv[1:]
    if scenario not in SCENARIOS:
        print(f"unknown scenario {scenario}", file=sys.stderr)
        sys.exit(2)
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="fjord-compat-kafka-python",
                                 request_timeout_ms=15000)
        SCENARIOS[scenario](bootstrap, admin)
        admin.close()
    except Exception as e:  # noqa: BLE001 - report any client error as a failure
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
