package fjord.compat;

import static fjord.compat.Client.check;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/** The data-path scenarios' records and checks (the same in every client program; see compat/lib/data.js). */
final class Data {
  static final List<String> CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");
  static final byte[] TAG = "fjørd".getBytes(StandardCharsets.UTF_8);

  /** A consumed record. */
  record Rec(int partition, long offset, byte[] key, byte[] value, List<Header> headers) {}

  private Data() {}

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] key(int i) {
    return bytes("key-" + i);
  }

  static byte[] value(int i) {
    byte[] head = bytes("value-" + i + ":");
    byte[] tail = bytes("fjord-compat ".repeat(8));
    byte[] v = Arrays.copyOf(head, head.length + 3 + tail.length);
    v[head.length] = 0x00;
    v[head.length + 1] = (byte) 0xff;
    v[head.length + 2] = 0x0a;
    System.arraycopy(tail, 0, v, head.length + 3, tail.length);
    return v;
  }

  static List<Header> headers(int i) {
    return List.of(new RecordHeader("idx", bytes(String.valueOf(i))), new RecordHeader("tag", TAG));
  }

  static byte[] large(int i) {
    byte[] v = new byte[256 * 4096];
    for (int j = 0; j < v.length; j++) v[j] = (byte) ((j + i) & 0xff);
    return v;
  }

  /** Kafka's murmur2, written out here (not Utils.murmur2) so that every client program checks its own copy. */
  static int murmur2(byte[] data) {
    final int m = 0x5bd1e995;
    int length = data.length;
    int h = 0x9747b28c ^ length;
    int length4 = length / 4;
    for (int i = 0; i < length4; i++) {
      int o = i * 4;
      int k = (data[o] & 0xff) | ((data[o + 1] & 0xff) << 8) | ((data[o + 2] & 0xff) << 16) | ((data[o + 3] & 0xff) << 24);
      k *= m;
      k ^= k >>> 24;
      k *= m;
      h *= m;
      h ^= k;
    }
    int t = length4 * 4;
    switch (length % 4) {
      case 3:
        h ^= (data[t + 2] & 0xff) << 16;
      // fall through
      case 2:
        h ^= (data[t + 1] & 0xff) << 8;
      // fall through
      case 1:
        h ^= data[t] & 0xff;
        h *= m;
      default:
    }
    h ^= h >>> 13;
    h *= m;
    h ^= h >>> 15;
    return h;
  }

  static int keyPartition(byte[] key, int partitions) {
    return (murmur2(key) & 0x7fffffff) % partitions;
  }

  static String show(byte[] b) {
    return b == null ? "null" : new String(b, StandardCharsets.ISO_8859_1).replace("\n", "\\n");
  }

  static String show(List<Header> hs) {
    List<String> out = new ArrayList<>();
    for (Header h : hs) out.add(h.key() + "=" + show(h.value()));
    return out.toString();
  }

  private static final Pattern KEY = Pattern.compile("key-(\\d+)");

  /** Exactly records 0..n-1, bytes intact, offsets and produce order increasing within each partition. */
  static void verifyRecords(List<Rec> records, int n, IntFunction<List<Header>> headersOf) {
    Set<Integer> seen = new HashSet<>();
    Map<Integer, long[]> last = new HashMap<>(); // partition -> {offset, i}
    for (Rec r : records) {
      Matcher m = KEY.matcher(r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8));
      check(m.matches() && Integer.parseInt(m.group(1)) < n, "unexpected key " + show(r.key()) + " at partition " + r.partition() + " offset " + r.offset());
      int i = Integer.parseInt(m.group(1));
      check(seen.add(i), "duplicate record key-" + i + " (partition " + r.partition() + " offset " + r.offset() + ")");
      check(Arrays.equals(r.value(), value(i)), "key-" + i + ": value " + show(r.value()) + ", expected " + show(value(i)));
      check(show(r.headers()).equals(show(headersOf.apply(i))), "key-" + i + ": headers " + show(r.headers()) + ", expected " + show(headersOf.apply(i)));
      long[] prev = last.get(r.partition());
      check(prev == null || (r.offset() > prev[0] && i > prev[1]),
          "partition " + r.partition() + " out of order: key-" + i + " at offset " + r.offset() + " after " + Arrays.toString(prev));
      last.put(r.partition(), new long[] {r.offset(), i});
    }
    check(records.size() == n, "consumed " + records.size() + " records, expected " + n + " (" + (n - seen.size()) + " missing)");
  }

  static void verifyKeyed(List<Rec> records, int n, int partitions) {
    Map<String, Integer> where = new HashMap<>();
    for (Rec r : records) {
      String k = new String(r.key(), StandardCharsets.UTF_8);
      Integer p = where.putIfAbsent(k, r.partition());
      check(p == null || p == r.partition(), "key " + k + " on partitions " + p + " and " + r.partition());
      check(r.partition() == keyPartition(r.key(), partitions), "key " + k + " on partition " + r.partition() + ", murmur2 says " + keyPartition(r.key(), partitions));
    }
    check(records.size() == n, "consumed " + records.size() + " records, expected " + n);
  }

  static void verifyLarge(List<Rec> records) {
    check(records.size() == 5, "consumed " + records.size() + " records, expected 5");
    for (int i = 0; i < 5; i++) {
      Rec r = records.get(i);
      check(Arrays.equals(r.key(), bytes("large-" + i)) && Arrays.equals(r.value(), large(i)),
          "record " + i + " (key " + show(r.key()) + ") differs: " + r.value().length + " bytes");
    }
  }

  static {
    check(murmur2(bytes("21")) == -973932308 && murmur2(bytes("foobar")) == -790332482, "murmur2 self-test failed");
  }
}
