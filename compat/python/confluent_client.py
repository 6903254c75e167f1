"""Fjord compatibility client: confluent-kafka (librdkafka). Usage: confluent_client.py BOOTSTRAP SCENARIO."""
import sys
import time

from confluent_kafka.admin import AdminClient, NewTopic


def connect(bootstrap, admin):
    md = admin.list_topics(timeout=15)
    brokers = list(md.brokers.values())
    check(len(brokers) == 1, f"expected 1 broker, got {brokers}")
    check(f"{brokers[0].host}:{brokers[0].port}" == bootstrap, f"expected broker {bootstrap}, got {brokers[0]}")
    check(md.cluster_id, "metadata has no cluster id")


def admin_topics(bootstrap, admin):
    name = f"compat-confluent-{time.time_ns()}"
    admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=1)], operation_timeout=15)[name].result(timeout=30)

    def listed():
        topics = admin.list_topics(timeout=15).topics
        check(name in topics, f"created topic {name} not listed")
        check(len(topics[name].partitions) == 3, f"topic {name} has {len(topics[name].partitions)} partitions, expected 3")
    retry(listed)
    admin.delete_topics([name], operation_timeout=15)[name].result(timeout=30)

    def gone():
        check(name not in admin.list_topics(timeout=15).topics, f"deleted topic {name} still listed")
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
        sys.exit("usage: confluent_client.py BOOTSTRAP SCENARIO")
    bootstrap, scenario = sys.argv[1:]
    if scenario not in SCENARIOS:
        print(f"unknown scenario {scenario}", file=sys.stderr)
        sys.exit(2)
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "fjord-compat-confluent"})
    try:
        SCENARIOS[scenario](bootstrap, admin)
    except Exception as e:  # noqa: BLE001 - report any client error as a failure
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
