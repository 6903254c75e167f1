// Kafka's Uuid.randomUuid().toString(): a random v4 UUID in base64url without padding, 22 chars,
// never starting with '-' (Kafka draws again: such an id would read as a command-line option).
// Cluster ids and log dir ids (directory.id) look like this.
import * as crypto from 'crypto';

export function randomKafkaUuid(): string {
  for (;;) {
    const bytes = crypto.randomBytes(16);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const id = bytes.toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
