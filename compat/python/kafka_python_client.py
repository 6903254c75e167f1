"""Fjord compatibility client: kafka-python. Usage: kafka_python_client.py BOOTSTRAP SCENARIO."""
import time

from kafka.admin import KafkaAdminClient, NewTopic

from common import check, main, retry


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


def run(bootstrap, scenario):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="fjord-compat-kafka-python", request_timeout_ms=15000)
    try:
        scenario(bootstrap, admin)
    finally:
        admin.close()


if __name__ == "__main__":
    main({"connect": connect, "admin-topics": admin_topics}, run)
