/**
 * A connection to any Kafka-compatible cluster (Fjord or Apache Kafka) for the admin commands and
 * the web console, over @platformatic/kafka (see the README for why that client).
 *
 * One `KafkaConnection` makes its clients on first use and closes them all at once.
 */
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import { Admin, Consumer, Producer, type ConsumerOptions, type ProducerOptions } from '@platformatic/kafka';

export type SaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

export interface ConnectionOptions {
  /** HOST:PORT of one or more brokers of the cluster. */
  bootstrapServers: string[];
  clientId?: string;
  /** Per request; the default suits a terminal. */
  timeoutMs?: number;
  /** TLS to the brokers (SSL, SASL_SSL). */
  tls?: TlsOptions;
  /** SASL to the brokers (SASL_PLAINTEXT, SASL_SSL). */
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
}

export const DEFAULT_CLIENT_ID = 'fjord-cli';

export class KafkaConnection {
  private adminClient?: Admin;
  private readonly others = new Set<{ close(force?: boolean): Promise<void> }>();

  constructor(readonly options: ConnectionOptions) {}

  private base() {
    return {
      clientId: this.options.clientId ?? DEFAULT_CLIENT_ID,
      bootstrapBrokers: this.options.bootstrapServers,
      timeout: this.options.timeoutMs ?? 30_000,
      // A command reports the broker's answer; a retriable code (UNKNOWN_TOPIC_OR_PARTITION after a
      // delete, ...) retried four times only hides it for longer.
      retries: 1,
      ...(this.options.tls ? { tls: this.options.tls } : {}),
      ...(this.options.sasl ? { sasl: this.options.sasl } : {}),
    };
  }

  admin(): Admin {
    this.adminClient ??= new Admin(this.base());
    return this.adminClient;
  }

  producer(options: Partial<ProducerOptions<Buffer, Buffer, Buffer, Buffer>> = {}): Producer<Buffer, Buffer, Buffer, Buffer> {
    const p = new Producer<Buffer, Buffer, Buffer, Buffer>({ ...this.base(), ...options });
    this.others.add(p);
    return p;
  }

  consumer(options: Partial<ConsumerOptions<Buffer, Buffer, Buffer, Buffer>> & { groupId: string }): Consumer<Buffer, Buffer, Buffer, Buffer> {
    const c = new Consumer<Buffer, Buffer, Buffer, Buffer>({ ...this.base(), ...options });
    this.others.add(c);
    return c;
  }

  async close(): Promise<void> {
    const clients = [...this.others, ...(this.adminClient ? [this.adminClient] : [])];
    this.others.clear();
    this.adminClient = undefined;
    await Promise.allSettled(clients.map((c) => c.close()));
  }
}
