"""Fjord compatibility client: confluent-kafka (librdkafka). Usage: confluent_client.py BOOTSTRAP SCENARIO."""
import time

from confluent_kafka.admin import AdminClient, NewTopic

from common import check, main, retry


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


def run(bootstrap, scenario):
    scenario(bootstrap, AdminClient({"bootstrap.servers": bootstrap, "client.id": "fjord-compat-confluent"}))


if __name__ == "__main__":
    main({"connect": connect, "admin-topics": admin_topics}, run)
