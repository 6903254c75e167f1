// Reads samples out of a Prometheus text exposition (what /metrics serves).

/** The value of the sample `name{labels}`, labels in the order rendered; undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const labelText = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',');
  const prefix = labelText === '' ? `${name} ` : `${name}{${labelText}} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}
