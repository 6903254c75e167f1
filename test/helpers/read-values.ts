import type { Consumer } from 'kafkajs';

/**
 * Runs a subscribed kafkajs consumer until it has read `count` records; resolves with their values
 * as text, in the order read. Rejects after `timeoutMs`, saying how many it got.
 */
export function readValues(consumer: Consumer, count: number, timeoutMs = 60_000): Promise<string[]> {
  const seen: string[] = [];
  return new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${seen.length} of ${count}`)), timeoutMs);
    void consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message.value!.toString());
        if (seen.length >= count) {
          clearTimeout(timer);
          resolve(seen);
        }
      },
    });
  });
}
