// Reads record batches with the Java client's own code (kafka-clients 4.x MemoryRecords), as a consumer
// would: checks each batch's CRC and prints one line per batch. Used by test/records/clients.test.ts.
// (kafka-clients 4.4 moved these classes to org.apache.kafka.common.record.internal.)
//   java -cp <kafka-clients jars>:<dir> JavaVerify FILE...
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

public class JavaVerify {
    public static void main(String[] args) throws Exception {
        for (String file : args) {
            MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(Files.readAllBytes(Paths.get(file))));
            for (RecordBatch batch : records.batches()) {
                batch.ensureValid();
                StringBuilder sb = new StringBuilder();
                sb.append(Paths.get(file).getFileName()).append(' ').append(batch.compressionType().name)
                    .append(" base=").append(batch.baseOffset()).append(" last=").append(batch.lastOffset())
                    .append(" max=").append(batch.maxTimestamp()).append(" type=").append(batch.timestampType());
                for (Record r : batch) {
                    sb.append(" | ").append(r.offset()).append('@').append(r.timestamp()).append(' ')
                        .append(r.hasKey() ? StandardCharsets.UTF_8.decode(r.key()).toString() : "null").append('=')
                        .append(r.hasValue() ? String.valueOf(r.valueSize()) : "null");
                    for (Header h : r.headers()) {
                        sb.append(' ').append(h.key()).append(':').append(h.value() == null ? "null" : new String(h.value(), StandardCharsets.UTF_8));
                    }
                }
                System.out.println(sb);
            }
        }
    }
}
