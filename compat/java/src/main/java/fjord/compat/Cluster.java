package fjord.compat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The cluster rows' side of the Java client (compat/cluster/cluster-test.js drives them against a 3-broker
 * cluster): the replication factor of the topics a scenario creates, and the cluster-produce mode.
 */
final class Cluster {
  private Cluster() {}

  /** 3 when the cluster rows run a scenario (FJORD_COMPAT_REPLICATION_FACTOR), else 1. */
  static short replicationFactor() {
    String rf = System.getenv("FJORD_COMPAT_REPLICATION_FACTOR");
    return rf == null ? 1 : Short.parseShort(rf);
  }

  /**
   * cluster-produce mode: an idempotent acks=all producer (the client's defaults, set explicitly) sends count
   * records key "seq-n" at about 500/s through a partition leader's death and prints "ack n partition offset"
   * for each acknowledgement.
   */
  static void produce(String bootstrap, String topic, int count) throws Exception {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
    props.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
    List<String> failed = Collections.synchronizedList(new ArrayList<>());
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int n = 0; n < count; n++) {
        int seq = n;
        byte[] key = ("seq-" + n).getBytes(StandardCharsets.UTF_8);
        producer.send(new ProducerRecord<>(topic, key, Integer.toString(n).getBytes(StandardCharsets.UTF_8)), (md, e) -> {
          if (e != null) failed.add("seq-" + seq + ": " + e);
          else System.out.println("ack " + seq + " " + md.partition() + " " + md.offset());
        });
        if (n % 10 == 9) Thread.sleep(20);
      }
      producer.flush();
    }
    Client.check(failed.isEmpty(), failed.size() + " deliveries failed: " + failed.subList(0, Math.min(5, failed.size())));
  }
}
