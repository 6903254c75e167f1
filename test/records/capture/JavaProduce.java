// Produces the fixture message set with the Java client (kafka-clients 4.x), used by capture-fixtures.ts:
//   java -cp <kafka-clients jars>:<dir> JavaProduce BOOTSTRAP TOPIC CODEC BIGVALUE_FILE
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class JavaProduce {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", args[0]);
        p.put("compression.type", args[2]);
        p.put("linger.ms", "200");
        p.put("batch.size", "1000000");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        byte[] big = Files.readAllBytes(Paths.get(args[3]));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            ProducerRecord<byte[], byte[]> r1 = new ProducerRecord<>(args[1], 0, b("k1"), b("hello"));
            r1.headers().add("h1", b("v1"));
            producer.send(r1);
            producer.send(new ProducerRecord<>(args[1], 0, null, b("no-key")));
            producer.send(new ProducerRecord<>(args[1], 0, b("big"), big));
            producer.send(new ProducerRecord<>(args[1], 0, b("k4"), null)).get();
        }
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
